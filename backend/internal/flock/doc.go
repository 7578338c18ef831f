// Package flock takes exclusive locks on files that the operating system
// lets go when the process ends, however it ends: a crash never leaves
// one taken.
package flock

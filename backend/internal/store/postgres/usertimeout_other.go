//go:build !linux

package postgres

import (
	"syscall"
	"time"
)

// userTimeout has no socket option to set here: a statement in flight on
// a connection whose database vanished waits for the system's
// retransmissions, or for its context.
func userTimeout(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}

// Package confine keeps the programs of stored agents inside the folders
// the operator allows. A path is judged where it really leads: every
// symbolic link on it is followed, also one that points at nothing yet
// and one before a "..", so a link cannot lead out of an allowed folder
// now or once its target appears. What is judged when an agent is
// stored is judged again when its program starts, since the files may
// have changed meanwhile.
package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// maxLinks bounds the links followed on one path, as the kernel does.
const maxLinks = 40

// Real is the absolute path with every symbolic link on it followed, as
// far as the path exists: what does not exist yet is taken as written,
// after the real folder it would be created in. A relative path is taken
// from the working directory.
func Real(path string) (string, error) {
	sep := string(filepath.Separator)
	if !filepath.IsAbs(path) {
		// Not filepath.Abs: cleaning the path first would take a ".."
		// after a link lexically, where the kernel follows the link.
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		path = wd + sep + path
	}
	done, todo, links := sep, strings.Split(path, sep), 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, name)
		info, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid):
			done = next
			continue
		case err != nil:
			return "", err
		case info.Mode()&fs.ModeSymlink == 0:
			done = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: too many symbolic links", path)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			done = sep
		}
		todo = append(strings.Split(target, sep), todo...)
	}
	return done, nil
}

// Outside says why path does not lie under one of dirs, or "" when it
// does; both sides are judged by Real.
func Outside(path string, dirs []string) string {
	real, err := Real(path)
	if err != nil {
		return fmt.Sprintf("%s cannot be resolved: %v", path, err)
	}
	for _, dir := range dirs {
		root, err := Real(dir)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(root, real)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return ""
		}
	}
	return fmt.Sprintf("%s is not under a directory this server allows for the programs of stored agents (%s)", path, strings.Join(dirs, ", "))
}

// Program is the real path of the program a process started as path
// would run (looked up in PATH when it names no folder), refused when it
// does not lie under one of dirs. Starting that real path rather than
// path leaves no link to change between the check and the start.
func Program(path string, dirs []string) (string, error) {
	if !strings.ContainsRune(path, filepath.Separator) {
		found, err := exec.LookPath(path)
		if err != nil {
			return "", err
		}
		path = found
	}
	if why := Outside(path, dirs); why != "" {
		return "", errors.New(why)
	}
	return Real(path)
}

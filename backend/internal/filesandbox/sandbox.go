// Package filesandbox confines a toolbox's file access to the paths an
// agent file's FileSandbox allows, as agents-exe defines it: a predicate
// on the path and a largest file size. Every path is judged where it
// really leads (confine.Real follows each symbolic link as the kernel
// would), and so are the paths of the predicate, so a link inside an
// allowed folder cannot lead out of it.
package filesandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/confine"
)

// Sandbox judges the paths one toolbox is asked for.
type Sandbox struct {
	box agentfile.FileSandbox
	// workDir is where relative paths are taken from.
	workDir string
}

// New returns the sandbox box describes, taking relative paths from
// workDir.
func New(box agentfile.FileSandbox, workDir string) *Sandbox {
	return &Sandbox{box: box, workDir: workDir}
}

// MaxFileSize is the largest file the sandbox lets through; 0: no limit.
func (s *Sandbox) MaxFileSize() int64 { return s.box.MaxFileSize }

// WorkDir is where relative paths are taken from.
func (s *Sandbox) WorkDir() string { return s.workDir }

// Real is path, taken from the working directory when relative, with
// every link on it followed.
func (s *Sandbox) Real(path string) (string, error) {
	if path == "" {
		return "", errors.New("no path given")
	}
	if !filepath.IsAbs(path) {
		path = s.workDir + string(filepath.Separator) + path
	}
	return confine.Real(path)
}

// Read returns the real path of a file the sandbox lets the toolbox
// read, or an error saying why not: outside the predicate, not a file,
// or larger than the largest size.
func (s *Sandbox) Read(path string) (string, error) {
	real, err := s.allowed(path)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("file not found: %s", path)
	case err != nil:
		return "", err
	case info.IsDir():
		return "", fmt.Errorf("%s is a directory, not a file", path)
	}
	if err := s.CheckSize(path, info.Size()); err != nil {
		return "", err
	}
	return real, nil
}

// Write returns the real path of a file the sandbox lets the toolbox
// write: an existing file must be allowed itself, a new one its folder
// (as agents-exe judges writes).
func (s *Sandbox) Write(path string) (string, error) {
	real, err := s.Real(path)
	if err != nil {
		return "", fmt.Errorf("%s cannot be resolved: %v", path, err)
	}
	info, err := os.Stat(real)
	switch {
	case err == nil && info.IsDir():
		return "", fmt.Errorf("%s is a directory, not a file", path)
	case err == nil:
		if !s.Allows(real) {
			return "", s.refused(path)
		}
		if err := s.CheckSize(path, info.Size()); err != nil {
			return "", err
		}
	case errors.Is(err, fs.ErrNotExist):
		if !s.Allows(filepath.Dir(real)) {
			return "", s.refused(path)
		}
	default:
		return "", err
	}
	return real, nil
}

// Dir returns the real path of a directory the sandbox lets the toolbox
// list.
func (s *Sandbox) Dir(path string) (string, error) {
	real, err := s.allowed(path)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("directory not found: %s", path)
	case err != nil:
		return "", err
	case !info.IsDir():
		return "", fmt.Errorf("%s is not a directory", path)
	}
	return real, nil
}

// CheckSize refuses a file of size bytes when it is over the largest size.
func (s *Sandbox) CheckSize(path string, size int64) error {
	if max := s.box.MaxFileSize; max > 0 && size > max {
		return fmt.Errorf("%s is %d bytes, over the file sandbox's maximum of %d bytes", path, size, max)
	}
	return nil
}

func (s *Sandbox) allowed(path string) (string, error) {
	real, err := s.Real(path)
	if err != nil {
		return "", fmt.Errorf("%s cannot be resolved: %v", path, err)
	}
	if !s.Allows(real) {
		return "", s.refused(path)
	}
	return real, nil
}

func (s *Sandbox) refused(path string) error {
	name := ""
	if s.box.Name != "" {
		name = " " + s.box.Name
	}
	return fmt.Errorf("access denied: %s is outside the file sandbox%s (allowed: %s)", path, name, s.box.Predicate)
}

// Allows reports whether the predicate allows real, a path with no link
// on it.
func (s *Sandbox) Allows(real string) bool {
	return eval(s.box.Predicate, real)
}

func eval(p agentfile.PathPredicate, path string) bool {
	switch p.Kind {
	case agentfile.PredAlwaysAllow:
		return true
	case agentfile.PredAlwaysDeny:
		return false
	case agentfile.PredFileExactly, agentfile.PredDirectoryExactly:
		return path == realOf(p.Path)
	case agentfile.PredDirectoryRecursive, agentfile.PredChildOf:
		return within(path, realOf(p.Path))
	case agentfile.PredDirectoryShallow:
		return filepath.Dir(path) == realOf(p.Path)
	case agentfile.PredFilePattern:
		ok, err := filepath.Match(p.Pattern, filepath.Base(path))
		return err == nil && ok
	case agentfile.PredFileExtension:
		return slices.Contains(p.Extensions, strings.TrimPrefix(filepath.Ext(path), "."))
	case agentfile.PredFileSizeLessThan:
		info, err := os.Stat(path)
		return err == nil && info.Size() <= p.Size
	case agentfile.PredAnd, agentfile.PredAll:
		for _, q := range p.Operands {
			if !eval(q, path) {
				return false
			}
		}
		return true
	case agentfile.PredOr, agentfile.PredAny:
		for _, q := range p.Operands {
			if eval(q, path) {
				return true
			}
		}
		return false
	case agentfile.PredNot:
		return len(p.Operands) == 1 && !eval(p.Operands[0], path)
	}
	return false
}

// realOf is a predicate's path where it really leads; a path that cannot
// be resolved matches nothing.
func realOf(path string) string {
	real, err := confine.Real(path)
	if err != nil {
		return "\x00"
	}
	return real
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

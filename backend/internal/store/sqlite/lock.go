package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/flock"
)

// One process writes a database file: a second server (or a command that
// would start one in-process) on the same file would take up the first
// one's runs as its own. Open takes an exclusive lock on a file beside the
// database, PATH.lock, for as long as the Store is open; the operating
// system lets it go when the process ends, however it ends. The holder
// writes who it is into the file, so whoever finds the lock taken can name
// it, and reach it (see Holder).

// Holder says which process has a database open, and where it answers.
type Holder struct {
	PID int `json:"pid"`
	// Command is what the process runs ("serve", "tui", …).
	Command string `json:"command,omitempty"`
	// Addr is the server's HTTP address (http://host:port), Socket its
	// Unix socket; empty when it has none.
	Addr   string `json:"addr,omitempty"`
	Socket string `json:"socket,omitempty"`
}

// String names the holder for a person.
func (h Holder) String() string {
	var parts []string
	if h.Command != "" {
		parts = append(parts, "agents "+h.Command)
	}
	if h.PID > 0 {
		parts = append(parts, fmt.Sprintf("pid %d", h.PID))
	}
	if h.Addr != "" {
		parts = append(parts, h.Addr)
	}
	if h.Socket != "" {
		parts = append(parts, "socket "+h.Socket)
	}
	if len(parts) == 0 {
		return "another process"
	}
	return strings.Join(parts, ", ")
}

// LockedError is the error of Open on a database another process holds.
type LockedError struct {
	Path   string
	Holder Holder
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("database %s is in use by %s; only one process may use a database file at a time", e.Path, e.Holder)
}

// ErrLocked matches every LockedError with errors.Is.
var ErrLocked = errors.New("sqlite: database in use by another process")

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// LockPath is the lock file of a database.
func LockPath(path string) string { return path + ".lock" }

// lockPatience is how long Open waits for a lock that is taken. A
// process that forks (to start a tool) shares every open file with the
// child until the child execs, its lock included: a lock the holder just
// let go may stay taken for that long. A process that holds the database
// holds it for much longer.
const lockPatience = 500 * time.Millisecond

// lockFile is a held lock.
type lockFile struct{ f *os.File }

// lock takes the lock of the database at path for h, or returns a
// LockedError naming the process that holds it.
func lock(path string, h Holder) (*lockFile, error) {
	name := LockPath(path)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: lock file: %w", path, err)
	}
	held, err := flock.TryLock(f)
	for wait := time.Now().Add(lockPatience); err == nil && !held && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
		held, err = flock.TryLock(f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open sqlite %s: lock %s: %w", path, name, err)
	}
	if !held {
		f.Close()
		other, _ := ReadHolder(path)
		return nil, &LockedError{Path: path, Holder: other}
	}
	l := &lockFile{f: f}
	if err := l.write(h); err != nil {
		l.release()
		return nil, fmt.Errorf("open sqlite %s: lock file: %w", path, err)
	}
	return l, nil
}

// write records h in the lock file.
func (l *lockFile) write(h Holder) error {
	h.PID = os.Getpid()
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err = l.f.WriteAt(append(b, '\n'), 0)
	return err
}

// release lets the lock go. The file stays: removing it could let two
// processes lock two different files of the same name.
func (l *lockFile) release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// ReadHolder reads who holds, or last held, the lock of the database at
// path.
func ReadHolder(path string) (Holder, error) {
	b, err := os.ReadFile(LockPath(path))
	if err != nil {
		return Holder{}, err
	}
	var h Holder
	if err := json.Unmarshal(b, &h); err != nil {
		return Holder{}, fmt.Errorf("lock file of %s: %w", path, err)
	}
	return h, nil
}

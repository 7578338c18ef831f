package cli

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/flock"
)

// A server on PostgreSQL claims its data directory, as a server on SQLite
// claims its database file: the directory records the tool processes the
// server runs (a second server there would end them as a crash's
// leftovers), and it keeps the server's default id. While it runs, the
// server holds an exclusive lock on serverLockFile there; the operating
// system lets it go when the process ends, however it ends.
//
// The default id is kept in serverIDFile, made the first time (the host
// name and a random part), so a server started again on the same
// directory is the same server: the leases in the database under its id
// are its dead predecessor's, and it takes their sessions up at once
// instead of waiting for the leases to expire. The lock is what makes the
// id belong to one live server.
const (
	serverLockFile = "server.lock"
	serverIDFile   = "server-id"
)

// claimPatience is how long a claim waits for a lock that is taken: a
// process that forks shares its open files with the child until the
// child execs (see sqlite's lock), so a lock just let go may stay taken
// that long.
const claimPatience = 500 * time.Millisecond

// claimDataDir takes the data directory dir for this process. release
// lets it go.
func claimDataDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	name := filepath.Join(dir, serverLockFile)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	held, err := flock.TryLock(f)
	for wait := time.Now().Add(claimPatience); err == nil && !held && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
		held, err = flock.TryLock(f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if !held {
		f.Close()
		who := "another server"
		if b, err := os.ReadFile(name); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				who = fmt.Sprintf("another server (pid %d)", pid)
			}
		}
		return nil, fmt.Errorf("data directory %s is in use by %s; each server needs a data directory of its own (XDG_DATA_HOME)", dir, who)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	// The file stays: removing it could let two processes lock two files
	// of the same name.
	return func() { f.Close() }, nil
}

// storedServerID returns the server id kept in the data directory dir,
// which this process must have claimed, and makes it the first time.
func storedServerID(dir string) (string, error) {
	name := filepath.Join(dir, serverIDFile)
	b, err := os.ReadFile(name)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(b))
		if err := cluster.ValidServerID(id); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return id, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read the server id: %w", err)
	}
	id := fmt.Sprintf("%.64s-%s", hostName(), strings.ToLower(rand.Text()[:8]))
	// Written whole or not at all: a crash while writing leaves no
	// half-written id for the next start.
	tmp := name + ".new"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("keep the server id: %w", err)
	}
	if err := os.Rename(tmp, name); err != nil {
		return "", fmt.Errorf("keep the server id: %w", err)
	}
	return id, nil
}

// oneOffServerID is hostname-pid-random: unique among live servers, and
// it tells an operator where a lease's holder runs. A process that has
// not claimed a data directory takes one.
func oneOffServerID() string {
	return fmt.Sprintf("%.64s-%d-%s", hostName(), os.Getpid(), strings.ToLower(rand.Text()[:8]))
}

// hostName is the host's name, with the bytes a server id may not hold
// replaced.
func hostName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "server"
	}
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return '_'
		}
		return r
	}, host)
}

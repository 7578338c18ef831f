package sandbox

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Sweep is what a sweep of the working folders did.
type Sweep struct {
	// Removed are the folders removed: those of sessions that no longer
	// exist, and scratch folders a stopped server left.
	Removed int
	// Kept are the folders of sessions that exist, or changed since the
	// sweep's start time.
	Kept int
	// More says the sweep stopped at its bound with folders left to look
	// at: the next start goes on.
	More bool
}

// SweepWorkDirs removes the working folders of sessions deleted while
// the server was not running to remove them: exists says whether a
// session is still there. It asks exists about no more than max folders,
// from a place in the list chosen at random, so that folders a sweep
// left are among the next one's. It removes only folders last changed
// before since (the server's start): one made since, whatever its
// session's state, is left to the removal that follows a deletion. It
// stops at the first error of exists or when ctx ends, with what it did
// so far.
func (s *Sandbox) SweepWorkDirs(ctx context.Context, since time.Time, max int, exists func(ctx context.Context, sessionID string) (bool, error)) (Sweep, error) {
	var sw Sweep
	if s == nil || s.work == "" {
		return sw, nil
	}
	entries, err := os.ReadDir(s.work)
	if errors.Is(err, os.ErrNotExist) {
		return sw, nil
	}
	if err != nil {
		return sw, fmt.Errorf("list %s: %w", s.work, err)
	}
	if len(entries) > max {
		start := rand.IntN(len(entries))
		sw.More = true
		entries = slices.Concat(entries[start:], entries[:start])[:max]
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return sw, err
		}
		info, err := e.Info()
		if err != nil || !info.IsDir() || !info.ModTime().Before(since) {
			sw.Kept++
			continue
		}
		name := e.Name()
		gone := strings.HasPrefix(name, scratchPrefix)
		if !gone {
			live, err := exists(ctx, name)
			if err != nil {
				return sw, fmt.Errorf("session %s: %w", name, err)
			}
			gone = !live
		}
		if !gone {
			sw.Kept++
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.work, name)); err != nil {
			return sw, err
		}
		sw.Removed++
	}
	return sw, nil
}

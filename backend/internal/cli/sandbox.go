package cli

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/postgres"
)

// toolSandbox is the sandbox of the stack's tool processes: working
// folders of sessions and folders of MCP servers under the data
// directory, and none of the server's own files readable (its data,
// database, config, keys, params and tokens). The
// launcher is this program, when its main starts with sandbox.Main: the
// agents binary, and the test binary of this package, whose in-process
// servers so run their tools confined as a real one does.
func (a *app) toolSandbox(res *config.Resolved, protect []string) *sandbox.Sandbox {
	launcher := ""
	if a.launcher {
		if exe, err := os.Executable(); err == nil {
			launcher = exe
		}
	}
	protect = append(protect, res.DataDir, res.ConfigFile, res.APIKeysFile, res.ParamsFile)
	if !postgres.IsDSN(res.DB) {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal", ".lock"} {
			protect = append(protect, res.DB+suffix)
		}
	}
	var paths []string
	for _, p := range protect {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return sandbox.New(sandbox.Options{
		Launcher:   launcher,
		WorkDir:    filepath.Join(res.DataDir, "work"),
		ServersDir: filepath.Join(res.DataDir, "mcp"),
		Protect:    paths,
	})
}

// logSandbox says at start whether the tools are confined, and how.
func logSandbox(log *slog.Logger, sb *sandbox.Sandbox) {
	st := sb.Status()
	if !st.Available {
		log.Warn("tool sandbox unavailable: tools run unconfined, and agents that require the sandbox are not loaded", "problem", st.Problem)
		return
	}
	if ok, why := sb.Namespaces(); !ok {
		log.Warn("tool sandbox without namespaces", "landlock_abi", st.LandlockABI, "problem", why)
		return
	}
	log.Info("tool sandbox", "landlock_abi", st.LandlockABI, "namespaces", true)
}

// removeWorkDirs removes a session's working folder when the session is
// deleted, until stop is called. Folders of sessions deleted while the
// server was not running are sweepWorkDirs's.
func removeWorkDirs(hub *events.Hub, sb *sandbox.Sandbox, log *slog.Logger) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			sub, _ := hub.Subscribe(events.AllScope(), nil)
			lagged := follow(sub, done, func(id string) {
				if err := sb.RemoveWorkDir(id); err != nil {
					log.Warn("remove a deleted session's working folder", "session", id, "err", err)
				}
			})
			sub.Close()
			if !lagged {
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// follow calls deleted with the id of each deleted session until done or
// the subscription ends; lagged says it ended for falling behind.
func follow(sub *events.Subscription, done <-chan struct{}, deleted func(id string)) (lagged bool) {
	for {
		select {
		case <-done:
			return false
		case ev, ok := <-sub.C():
			if !ok {
				return sub.Err() == events.ErrLagged
			}
			if ev.GetKind() == events.KindSessionDeleted {
				deleted(ev.GetSessionId())
			}
		}
	}
}

// sweepBound is the most working folders one start asks the store
// about: a data folder of many sessions is swept over several starts.
const sweepBound = 10000

// sweepWorkDirs removes, in the background, the working folders of
// sessions deleted while the server was not running to remove them, and
// the scratch folders a stop left; stop ends the sweep and waits for it.
// On a shared PostgreSQL each server has a data folder of its own, and
// sweeps only its own folders.
func sweepWorkDirs(db store.Store, sb *sandbox.Sandbox, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	started := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sw, err := sb.SweepWorkDirs(ctx, started, sweepBound, func(ctx context.Context, id string) (bool, error) {
			_, err := db.GetMeta(ctx, id)
			if errs.KindOf(err) == errs.KindNotFound {
				return false, nil
			}
			return err == nil, err
		})
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("sweep the working folders of deleted sessions", "removed", sw.Removed, "error", err.Error())
		case sw.Removed > 0 || sw.More:
			log.Info("working folders of deleted sessions removed", "removed", sw.Removed, "kept", sw.Kept, "more", sw.More)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

package cli

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/sandbox"
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
// server was not running stay.
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

package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
)

type serveFlags struct {
	offlineModel  string
	logFormat     string
	shutdownGrace time.Duration
}

func (a *app) serveCommand() *cobra.Command {
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the server: agents, sessions, the API and the web app",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), sf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.flags.DB, "db", "", "SQLite file or postgres:// DSN (default $XDG_DATA_HOME/agents/agents.db)")
	f.StringVar(&a.flags.Bind, "bind", "", "address to listen on (default 127.0.0.1)")
	f.IntVar(&a.flags.Port, "port", 0, "TCP port (default 7420; 0 in the config file means the default)")
	f.StringVar(&sf.offlineModel, "offline-model", "", "model endpoint for agents whose API key is not configured (the offline model)")
	f.StringVar(&sf.logFormat, "log-format", "json", "log format: json or text")
	f.DurationVar(&sf.shutdownGrace, "shutdown-grace", 10*time.Second, "how long running requests may take to finish on shutdown")
	return cmd
}

func (a *app) newLogger(format string) (*slog.Logger, error) {
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(a.stderr, nil)), nil
	case "text":
		return slog.New(slog.NewTextHandler(a.stderr, nil)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want json or text", format)
}

func (a *app) serve(ctx context.Context, sf serveFlags) error {
	log, err := a.newLogger(sf.logFormat)
	if err != nil {
		return err
	}
	res, err := a.resolve()
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		log.Warn("config", "problem", w.Error())
	}
	keys, err := res.LoadKeys(a.lookupEnv)
	if err != nil {
		return err
	}
	cat, err := a.loadCatalog(ctx, res, keys, sf.offlineModel)
	if err != nil {
		return err
	}
	snap := cat.Snapshot()
	for _, e := range snap.Errors {
		log.Warn("agent file not loaded", "problem", e.Error())
	}
	log.Info("agents loaded", "count", len(snap.Agents()), "from", res.AgentsFrom)

	db, err := openStore(ctx, res.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	hub := events.New(events.Options{})
	defer hub.Shutdown()
	run := runner.New(runner.Options{
		Log:     log,
		Store:   db,
		Hub:     hub,
		Catalog: cat,
		Models:  runner.LLMModels(keyValue(keys), log),
	})
	defer run.Close()
	if err := run.Recover(ctx); err != nil {
		return fmt.Errorf("recover sessions: %w", err)
	}

	srv := server.New(server.Deps{Log: log, Catalog: cat, Runner: run, Hub: hub})
	ln, err := net.Listen("tcp", net.JoinHostPort(res.Bind, strconv.Itoa(res.Port)))
	if err != nil {
		return err
	}
	httpServer := newHTTPServer(srv.Handler())
	log.Info("listening", "addr", "http://"+ln.Addr().String(), "db", res.Paths().DB)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- httpServer.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stop() // a second signal now kills the process at once
	log.Info("shutting down", "grace", sf.shutdownGrace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), sf.shutdownGrace)
	defer cancel()
	hub.Shutdown() // ends the event streams, which Shutdown would wait for
	if err := httpServer.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// openStore opens the SQLite store, creating its directory.
func openStore(ctx context.Context, dsn string) (store.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return nil, fmt.Errorf("--db %s: the PostgreSQL store is not available in this version", "postgres://…")
	}
	if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	return sqlite.Open(ctx, dsn)
}

// keyValue looks up API key values for the model clients.
func keyValue(keys config.Keys) func(id string) (string, bool) {
	return func(id string) (string, bool) {
		secret, ok := keys.Lookup(id)
		if !ok {
			return "", false
		}
		return secret.Reveal(), true
	}
}

// newHTTPServer serves HTTP/1.1 and unencrypted HTTP/2 (for gRPC and
// Connect streaming clients) on one listener.
func newHTTPServer(h http.Handler) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           h,
		Protocols:         &protocols,
		ReadHeaderTimeout: 10 * time.Second,
	}
}

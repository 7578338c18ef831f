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
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-os/agents/backend/internal/placement/leased"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/backend/internal/webui"
)

// defaultMaxRuns bounds the runs active at once on a server: enough for
// any one person, few enough that a runaway client cannot exhaust it.
const defaultMaxRuns = 256

type serveFlags struct {
	offlineModel   string
	logFormat      string
	shutdownGrace  time.Duration
	socket         string
	authTokens     string
	insecureNoAuth bool
	corsOrigins    []string
	allowedHosts   []string
	publicMetrics  bool
	limits         server.Limits
	retention      runner.Retention
	idleEvict      time.Duration
	anyPort        bool // --port 0 was given: listen on any free port
	webDir         string
	cluster        clusterOptions
}

func (a *app) serveCommand() *cobra.Command {
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the server: agents, sessions, the API and the web app",
		Long: `Run the server. It listens on --bind:--port (127.0.0.1:7420) and, with
--socket, on a Unix socket that only the current user can open.

Without --auth-tokens every request acts as the local owner, so the server
refuses a non-loopback --bind unless told --insecure-no-auth, and refuses
requests whose Host or Origin is not loopback or configured.

SIGTERM or SIGINT stops it gracefully within --shutdown-grace; a second
signal stops it at once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// 0 is "unset" for the config file; given on the command line
			// it asks for any free port (the log says which).
			sf.anyPort = cmd.Flags().Changed("port") && a.flags.Port == 0
			return a.serve(cmd.Context(), sf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.flags.DB, "db", "", "SQLite file or postgres:// DSN (default $XDG_DATA_HOME/agents/agents.db)")
	f.StringVar(&a.flags.Bind, "bind", "", "address to listen on (default 127.0.0.1)")
	f.StringSliceVar(&a.flags.StoredAgentToolDirs, "stored-agent-tool-dirs", nil, "directories the bash tools and MCP server programs of agents stored through the API must lie under (repeatable or comma-separated; default none: stored agents run no program)")
	f.IntVar(&a.flags.Port, "port", 0, "TCP port (default 7420; --port 0 picks a free port, logged on start)")
	f.StringVar(&sf.socket, "socket", "", "also listen on this Unix socket (mode 0600, no token needed)")
	f.StringVar(&sf.authTokens, "auth-tokens", "", `bearer tokens file {"tokens": [{"token" or "sha256", "owner", "admin"}]}`)
	f.BoolVar(&sf.insecureNoAuth, "insecure-no-auth", false, "allow a non-loopback --bind without --auth-tokens")
	f.StringArrayVar(&sf.corsOrigins, "cors-origin", nil, `web origin allowed to call the API from a browser (repeatable; "*" only without --auth-tokens)`)
	f.StringArrayVar(&sf.allowedHosts, "allowed-host", nil, "Host name accepted besides loopback ones when there are no tokens (repeatable)")
	f.BoolVar(&sf.publicMetrics, "public-metrics", false, "serve /metrics without a token (default: admin tokens only)")
	f.Int64Var(&sf.limits.MaxBodyBytes, "max-body-bytes", server.DefaultMaxBodyBytes, "largest request body")
	f.IntVar(&sf.limits.MaxMessageBytes, "max-message-bytes", server.DefaultMaxMessageBytes, "largest message text")
	f.IntVar(&sf.limits.MaxAttachmentBytes, "max-attachment-bytes", server.DefaultMaxAttachmentBytes, "largest attachment")
	f.IntVar(&sf.limits.MaxRuns, "max-runs", defaultMaxRuns, "most runs active at once on the server, whoever starts them (0: no limit)")
	f.IntVar(&sf.limits.MaxRunsPerOwner, "max-runs-per-owner", 0, "most runs active at once per owner (0: no limit)")
	f.DurationVar(&sf.idleEvict, "idle-evict", runner.DefaultIdleEvict, "how long an idle session stays loaded in memory")
	f.DurationVar(&sf.retention.Age, "event-retention", runner.DefaultRetentionAge, "how long the event log keeps events for replay")
	f.IntVar(&sf.retention.Count, "event-retention-count", runner.DefaultRetentionCount, "most events the event log keeps for replay")
	f.DurationVar(&sf.retention.ModelCalls, "model-call-retention", runner.DefaultModelCallRetention, "how long each model call is kept on its own before it is folded into its hour's sums (usage series read the same)")
	f.StringVar(&sf.webDir, "web-dir", "", "serve the web app from this folder (a build of web/, for development) instead of the one built in")
	f.StringVar(&sf.cluster.serverID, "server-id", "", "this server's id among the servers of one PostgreSQL database (default: the one kept in the data directory, made on the first start)")
	f.DurationVar(&sf.cluster.leaseTTL, "lease-ttl", leased.DefaultLeaseTTL, "PostgreSQL: how long a session's run lease lives unrenewed, so how soon another server takes over the runs of one that died")
	f.StringVar(&sf.offlineModel, "offline-model", "", "the model of agents whose API key is not configured: a URL, or an offline model's rules file it serves itself")
	a.addModelFlags(cmd)
	f.StringVar(&sf.logFormat, "log-format", "json", "log format: json or text")
	f.DurationVar(&sf.shutdownGrace, "shutdown-grace", 10*time.Second, "how long requests and running steps get to finish on shutdown")
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

// security builds the server's security settings from the flags.
func (sf serveFlags) security() (server.Security, error) {
	sec := server.Security{
		CORSOrigins:   sf.corsOrigins,
		AllowedHosts:  sf.allowedHosts,
		PublicMetrics: sf.publicMetrics,
	}
	if sf.authTokens != "" {
		tokens, err := server.LoadTokens(sf.authTokens)
		if err != nil {
			return sec, err
		}
		sec.Tokens = tokens
	}
	return sec, sec.Validate()
}

// webApp returns the handler of the web app: the folder of --web-dir, or
// the app built into the binary.
func (sf serveFlags) webApp() (http.Handler, error) {
	if sf.webDir == "" {
		return webui.Handler(webui.Embedded()), nil
	}
	app, err := webui.Dir(sf.webDir)
	if err != nil {
		return nil, fmt.Errorf("--web-dir: %w", err)
	}
	return webui.Handler(app), nil
}

func (a *app) serve(ctx context.Context, sf serveFlags) error {
	defer tuneGC()()
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
	sec, err := sf.security()
	if err != nil {
		return err
	}
	if err := server.CheckBind(res.Bind, sec.Tokens != nil, sf.insecureNoAuth); err != nil {
		return err
	}
	if sec.Tokens == nil && !server.IsLoopbackAddr(res.Bind) {
		log.Warn("serving without auth tokens on a non-loopback address (--insecure-no-auth)", "bind", res.Bind)
		// Clients that dial the address itself send it as Host.
		if ip := net.ParseIP(res.Bind); ip != nil && !ip.IsUnspecified() {
			sec.AllowedHosts = append(sec.AllowedHosts, res.Bind)
		}
	}
	if sf.authTokens != "" && sec.Tokens.Plain() > 0 {
		warnIfReadable(log, sf.authTokens)
	}
	web, err := sf.webApp()
	if err != nil {
		return err
	}

	// Listen before loading anything, so a port in use fails fast.
	port := res.Port
	if sf.anyPort {
		port = 0
	}
	tcp, err := net.Listen("tcp", net.JoinHostPort(res.Bind, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer tcp.Close()
	var unix net.Listener
	if sf.socket != "" {
		if unix, err = listenUnix(sf.socket); err != nil {
			return err
		}
		defer unix.Close()
	}

	holder := sqlite.Holder{Command: a.command, Addr: "http://" + tcp.Addr().String()}
	if sf.socket != "" {
		// Absolute, so a command started elsewhere reaches it.
		if holder.Socket, err = filepath.Abs(sf.socket); err != nil {
			return err
		}
	}
	sf.cluster.claimDataDir = true
	st, err := a.startStack(ctx, res, log, stackOptions{
		holder:       holder,
		protect:      []string{sf.authTokens},
		offlineModel: sf.offlineModel,
		security:     sec,
		limits:       sf.limits,
		retention:    sf.retention,
		idleEvict:    sf.idleEvict,
		cluster:      sf.cluster,
		recover:      true,
		web:          web,
	})
	if errors.Is(err, sqlite.ErrLocked) {
		return fmt.Errorf("%w (stop it first, or give this server another --db)", err)
	} else if err != nil {
		return err
	}
	servers := []*http.Server{newHTTPServer(st.server.Handler())}
	listeners := []net.Listener{tcp}
	if unix != nil {
		servers = append(servers, newHTTPServer(st.server.LocalHandler()))
		listeners = append(listeners, unix)
	}
	// The signals are taken before `listening` is logged: a supervisor
	// that stops the server as soon as it said so gets a graceful stop.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Info("listening", "addr", "http://"+tcp.Addr().String(), "socket", sf.socket, "auth", sec.Tokens != nil, "db", res.Paths().DB)
	served := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { served <- srv.Serve(listeners[i]) }()
	}
	go releaseWhenIdle(ctx, log, st.activity)
	select {
	case err = <-served:
		// A listener failed on its own: stop the others the same way.
		log.Error("listener failed", "error", err.Error())
	case <-ctx.Done():
	}
	stop() // from now on a second signal kills the process at once
	log.Info("shutting down", "grace", sf.shutdownGrace)
	shutdown(st, servers, sf.shutdownGrace)
	log.Info("stopped")
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// shutdown stops the server within grace: readiness fails, listeners stop
// accepting, event streams end cleanly, running requests and steps get the
// grace to finish, and whatever is left is cut. Runs cut short stay
// `running` in the store and resume at the next start.
func shutdown(st *stack, servers []*http.Server, grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	st.server.Drain()
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Go(func() {
			if err := srv.Shutdown(ctx); err != nil {
				// The grace is over: cut the requests still open.
				_ = srv.Close()
			}
		})
	}
	// Ending the streams lets Shutdown finish: it waits for every handler.
	wg.Go(func() { st.drain(ctx) })
	wg.Wait()
	st.close()
}

// warnIfReadable warns when other users may read the tokens file, which
// holds tokens as they are (digests alone give a reader nothing).
func warnIfReadable(log *slog.Logger, path string) {
	if info, err := os.Stat(path); err == nil && info.Mode().Perm()&0o004 != 0 {
		log.Warn("the auth tokens file is readable by every user; chmod o-r it, or store sha256 digests instead of tokens", "file", path)
	}
}

// listenUnix listens on a Unix socket only its owner may open. A socket
// file left by a server that crashed is replaced; one a live server
// answers on is not.
func listenUnix(path string) (net.Listener, error) {
	if info, err := os.Lstat(path); err == nil {
		if info.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("--socket %s: exists and is not a socket", path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("--socket %s: another server is listening on it", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("--socket %s: remove stale socket: %w", path, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("--socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	// The socket is created with the umask's mode, which already denies
	// others the write permission connecting needs under the usual 022;
	// 0600 takes the group's away too.
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("--socket %s: %w", path, err)
	}
	return ln, nil
}

// newHTTPServer serves HTTP/1.1 and unencrypted HTTP/2 (for gRPC and
// Connect streaming clients) on one listener. Its event streams write to
// the connection itself (server.ConnContext).
func newHTTPServer(h http.Handler) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           h,
		Protocols:         &protocols,
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext:       server.ConnContext,
	}
}

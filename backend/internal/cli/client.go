package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
)

// client is how a command talks to a server: the generated Connect
// clients, over HTTP, a Unix socket, or a socket to a server this process
// started for the command. Commands never reach the runner directly, so
// local and attached use are one code path.
type client struct {
	Agents   agentsv1connect.AgentServiceClient
	Sessions agentsv1connect.SessionServiceClient
	Events   agentsv1connect.EventServiceClient

	close func()
}

// Close releases the connection and, for a local server, stops it.
func (c *client) Close() { c.close() }

// clientFlags choose the server a command talks to.
type clientFlags struct {
	// attach is a server URL (http://host:port), a Unix socket
	// (unix:///path or a path), or "" for a server in this process.
	attach    string
	token     string
	tokenFile string
}

// addClientFlags registers --attach, --token and --token-file on cmd and
// its subcommands.
func (cf *clientFlags) addClientFlags(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&cf.attach, "attach", "", "server to use: http(s)://host:port, unix:///path or a socket path (default: start one in this process)")
	pf.StringVar(&cf.token, "token", "", "bearer token for --attach (prefer --token-file or $AGENTS_TOKEN)")
	pf.StringVar(&cf.tokenFile, "token-file", "", "file holding the bearer token for --attach")
}

// embedOptions tune the server a command starts in-process.
type embedOptions struct {
	// recover resumes runs left running, which only a command that runs
	// agents (and owns the database while it does) should do.
	recover bool
	// offlineModel is the endpoint of agents without an API key.
	offlineModel string
}

// dial connects to the server cf names, starting one in this process when
// there is no --attach.
func (a *app) dial(ctx context.Context, cf clientFlags, opts embedOptions) (*client, error) {
	if cf.attach == "" {
		return a.dialEmbedded(ctx, opts)
	}
	token, err := cf.bearerToken(a.lookupEnv)
	if err != nil {
		return nil, err
	}
	httpClient, baseURL, err := transportFor(cf.attach)
	if err != nil {
		return nil, err
	}
	return newClient(httpClient, baseURL, token, func() { httpClient.CloseIdleConnections() }), nil
}

// bearerToken is --token, else the first line of --token-file, else
// $AGENTS_TOKEN, else none.
func (cf clientFlags) bearerToken(lookupEnv func(string) (string, bool)) (string, error) {
	switch {
	case cf.token != "":
		return cf.token, nil
	case cf.tokenFile != "":
		b, err := os.ReadFile(cf.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		token, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		if token == "" {
			return "", fmt.Errorf("--token-file %s: is empty", cf.tokenFile)
		}
		return strings.TrimSpace(token), nil
	}
	if v, ok := lookupEnv("AGENTS_TOKEN"); ok {
		return strings.TrimSpace(v), nil
	}
	return "", nil
}

// transportFor returns the HTTP client and base URL that reach attach.
func transportFor(attach string) (*http.Client, string, error) {
	if path, ok := socketPath(attach); ok {
		return unixClient(path), "http://localhost", nil
	}
	if !strings.HasPrefix(attach, "http://") && !strings.HasPrefix(attach, "https://") {
		return nil, "", fmt.Errorf("--attach %q: want http(s)://host:port, unix:///path or a socket path", attach)
	}
	return &http.Client{}, strings.TrimSuffix(attach, "/"), nil
}

// socketPath reports whether attach names a Unix socket, and its path.
func socketPath(attach string) (string, bool) {
	if p, ok := strings.CutPrefix(attach, "unix://"); ok {
		return p, true
	}
	if strings.HasPrefix(attach, "/") || strings.HasPrefix(attach, "./") || strings.HasPrefix(attach, "../") {
		return attach, true
	}
	return "", false
}

func unixClient(path string) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
	}}
}

func newClient(h *http.Client, baseURL, token string, closeFn func()) *client {
	var opts []connect.ClientOption
	if token != "" {
		opts = append(opts, connect.WithInterceptors(bearerInterceptor(token)))
	}
	return &client{
		Agents:   agentsv1connect.NewAgentServiceClient(h, baseURL, opts...),
		Sessions: agentsv1connect.NewSessionServiceClient(h, baseURL, opts...),
		Events:   agentsv1connect.NewEventServiceClient(h, baseURL, opts...),
		close:    closeFn,
	}
}

// dialEmbedded starts the server on a private Unix socket in a temporary
// directory and connects to it like to any attached server.
func (a *app) dialEmbedded(ctx context.Context, opts embedOptions) (*client, error) {
	res, err := a.resolve()
	if err != nil {
		return nil, err
	}
	// The commands' own output is the point; the server's log would only
	// clutter it, so only its problems reach stderr.
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := a.startStack(ctx, res, log, stackOptions{offlineModel: opts.offlineModel, recover: opts.recover})
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agents-")
	if err != nil {
		st.close()
		return nil, err
	}
	path := filepath.Join(dir, "agents.sock")
	ln, err := listenUnix(path)
	if err != nil {
		st.close()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	srv := newHTTPServer(st.server.LocalHandler())
	go func() { _ = srv.Serve(ln) }()
	h := unixClient(path)
	return newClient(h, "http://localhost", "", func() {
		h.CloseIdleConnections()
		shutdown(st, []*http.Server{srv}, embeddedGrace)
		_ = os.RemoveAll(dir)
	}), nil
}

// embeddedGrace bounds the shutdown of a command's own server.
const embeddedGrace = 5 * time.Second

// bearerInterceptor sends the token with every call, streams included.
type bearerInterceptor string

var _ connect.Interceptor = bearerInterceptor("")

func (t bearerInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(t))
		return next(ctx, req)
	}
}

func (t bearerInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(t))
		return conn
	}
}

func (t bearerInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// String hides the token, should the interceptor ever be printed.
func (t bearerInterceptor) String() string { return "bearer [redacted]" }

// describeError turns a client error into a line for the terminal: the
// server's message, and the machine code when it has one.
func describeError(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	if ce.Code() == connect.CodeUnavailable {
		return fmt.Errorf("server unavailable: %s", ce.Message())
	}
	return fmt.Errorf("%s: %s", ce.Code(), ce.Message())
}

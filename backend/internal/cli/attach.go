package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"
	"github.com/agents-os/agents/backend/internal/server"
)

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
	// limits bound requests and runs as serve's flags do.
	limits server.Limits
	// log receives the server's log; nil: its warnings go to stderr.
	log *slog.Logger
}

// dial connects to the server cf names, starting one in this process when
// there is no --attach. Commands never reach the runner directly, so
// local and attached use are one code path.
func (a *app) dial(ctx context.Context, cf clientFlags, opts embedOptions) (*client.Client, error) {
	if cf.attach == "" {
		return a.dialEmbedded(ctx, opts)
	}
	return a.attach(ctx, cf)
}

// attach connects to the server cf names and checks it answers as an
// agents server that takes the token, so a command fails with a clear
// message before it does anything.
func (a *app) attach(ctx context.Context, cf clientFlags) (*client.Client, error) {
	token, err := cf.bearerToken(a.lookupEnv)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(cf.attach, token)
	if err != nil {
		return nil, fmt.Errorf("--attach %w", err)
	}
	if err := c.Check(ctx); err != nil {
		c.Close()
		return nil, withAdvice(err, token != "")
	}
	return c, nil
}

// withAdvice adds what to do about a failed Check.
func withAdvice(err error, hadToken bool) error {
	switch {
	case errors.Is(err, client.ErrUnreachable):
		return fmt.Errorf("%w (is agents serve running there?)", err)
	case errors.Is(err, client.ErrUnauthenticated) && !hadToken:
		return fmt.Errorf("%w (give a token with --token-file, --token or $AGENTS_TOKEN)", err)
	}
	return err
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

// dialEmbedded starts the server in this process and returns a client
// of it over the in-process transport; closing the client stops it.
func (a *app) dialEmbedded(ctx context.Context, opts embedOptions) (*client.Client, error) {
	res, err := a.resolve()
	if err != nil {
		return nil, err
	}
	log := opts.log
	if log == nil {
		// The commands' own output is the point; the server's log would
		// only clutter it, so only its problems reach stderr.
		log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	st, err := a.startStack(ctx, res, log, stackOptions{offlineModel: opts.offlineModel, recover: opts.recover, limits: opts.limits})
	if err != nil {
		return nil, err
	}
	c := client.InProcess(st.server.LocalHandler())
	c.OnClose(func() { shutdown(st, nil, embeddedGrace) })
	return c, nil
}

// embeddedGrace bounds the shutdown of a command's own server.
const embeddedGrace = 5 * time.Second

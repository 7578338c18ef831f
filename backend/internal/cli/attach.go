package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/tui/sanitize"
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

// addServerFlags registers on cmd and its subcommands the flags that
// choose their server: --attach and its token, or the database and the
// model limits of the server started in-process.
func (a *app) addServerFlags(cmd *cobra.Command, cf *clientFlags) {
	cf.addClientFlags(cmd)
	cmd.PersistentFlags().StringVar(&a.flags.DB, "db", "", "database of the server started in-process (without --attach)")
	a.addModelFlags(cmd)
}

// offlineModelUsage is the help of --offline-model on the commands that
// run agents on a server they start.
const offlineModelUsage = "the model of agents whose API key is not configured: a URL, or an offline model's rules file (without --attach)"

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

// servingOptions are those of the server a command starts in-process
// to serve a client as serve would, for as long as it runs (tui, mcp):
// it resumes the runs left running and bounds runs as serve does.
func servingOptions(offlineModel string, log *slog.Logger) embedOptions {
	return embedOptions{recover: true, offlineModel: offlineModel, limits: server.Limits{MaxRuns: defaultMaxRuns}, log: log}
}

// refuseEmbeddedFlags refuses, with --attach, the flags that tune only
// the server a command would start in-process.
func refuseEmbeddedFlags(cmd *cobra.Command, cf clientFlags) error {
	if cf.attach == "" {
		return nil
	}
	for _, name := range []string{"db", "offline-model", "max-model-output-bytes", "max-model-call-time"} {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s is for the embedded server; it does not apply with --attach", name)
		}
	}
	return nil
}

// dial connects to the server cf names, starting one in this process when
// there is no --attach. Commands never reach the runner directly, so
// local and attached use are one code path.
func (a *app) dial(ctx context.Context, cf clientFlags, opts embedOptions) (*client.Client, error) {
	dial := a.attach
	if cf.attach == "" {
		dial = func(ctx context.Context, cf clientFlags) (*client.Client, error) {
			return a.dialEmbedded(ctx, cf, opts)
		}
	}
	c, err := dial(ctx, cf)
	if err != nil || !a.printsToTerminal() {
		return c, err
	}
	// What the server sends is text a model, a tool or another client
	// wrote. Printed on a terminal, an escape sequence in it would drive
	// the terminal (set the clipboard, move the cursor, talk to its own
	// protocols), so it is cleaned before any command prints it, as the
	// TUI cleans it; into a pipe or a file it goes as it is.
	return c.Intercepted(sanitize.Interceptor()), nil
}

// withClient runs f with a client of the server cf names (see dial) and
// closes the client when f returns, which stops a server started for
// the command.
// idCommand is a command on one object its only argument names: act
// asks the server with that id and prints what it answers.
func (a *app) idCommand(cf *clientFlags, use, short string, act func(ctx context.Context, c *client.Client, id string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				return act(ctx, c, args[0])
			})
		},
	}
}

func (a *app) withClient(ctx context.Context, cf clientFlags, f func(context.Context, *client.Client) error) error {
	return a.withClientOptions(ctx, cf, embedOptions{}, f)
}

// withClientOptions is withClient for a command that tunes the server it
// starts in-process: one that runs agents.
func (a *app) withClientOptions(ctx context.Context, cf clientFlags, opts embedOptions, f func(context.Context, *client.Client) error) error {
	c, err := a.dial(ctx, cf, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	return f(ctx, c)
}

// onSession is withClient for a command on one session: it resolves the
// session argument (an id or a unique prefix) and runs f with its id.
func (a *app) onSession(ctx context.Context, cf clientFlags, arg string, f func(context.Context, *client.Client, string) error) error {
	return a.withClient(ctx, cf, func(ctx context.Context, c *client.Client) error {
		id, err := resolveSession(ctx, c, arg)
		if err != nil {
			return err
		}
		return f(ctx, c, id)
	})
}

// printsToTerminal says whether the command's output or its messages go
// to a terminal.
func (a *app) printsToTerminal() bool {
	return isTerminal(a.stdout) || isTerminal(a.stderr)
}

// isTerminal says whether w is a terminal: a character device, or a
// writer that says it is one.
func isTerminal(w io.Writer) bool {
	switch w := w.(type) {
	case interface{ IsTerminal() bool }:
		return w.IsTerminal()
	case *os.File:
		info, err := w.Stat()
		return err == nil && info.Mode()&os.ModeCharDevice != 0
	}
	return false
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
// of it over the in-process transport; closing the client stops it. When
// another process holds the database, it uses that one's server instead
// (see attachHolder), with cf's token.
func (a *app) dialEmbedded(ctx context.Context, cf clientFlags, opts embedOptions) (*client.Client, error) {
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
	st, err := a.startStack(ctx, res, log, stackOptions{offlineModel: opts.offlineModel, recover: opts.recover, limits: opts.limits,
		holder: sqlite.Holder{Command: a.command}})
	var locked *sqlite.LockedError
	if errors.As(err, &locked) {
		return a.attachHolder(ctx, cf, locked)
	}
	if err != nil {
		return nil, err
	}
	c := client.InProcess(st.server.LocalHandler())
	c.OnClose(func() { shutdown(st, nil, embeddedGrace) })
	return c, nil
}

// embeddedGrace bounds the shutdown of a command's own server.
const embeddedGrace = 5 * time.Second

// attachHolder uses the server that holds the database a command would
// have started its own server on: one database has one process, and two
// would take up each other's runs. It attaches through the server's
// socket, else its HTTP address (with the command's token, if any), and
// refuses, naming the server, when it can reach neither.
func (a *app) attachHolder(ctx context.Context, cf clientFlags, locked *sqlite.LockedError) (*client.Client, error) {
	h := locked.Holder
	token, err := cf.bearerToken(a.lookupEnv)
	if err != nil {
		return nil, err
	}
	var tried []string
	for _, target := range []struct{ addr, token string }{{h.Socket, ""}, {h.Addr, token}} {
		if target.addr == "" {
			continue
		}
		c, err := client.Dial(target.addr, target.token)
		if err == nil {
			if err = c.Check(ctx); err == nil {
				fmt.Fprintf(a.stderr, "agents: %s is in use by %s; using that server\n", locked.Path, h)
				return c, nil
			}
			c.Close()
		}
		tried = append(tried, fmt.Sprintf("%s: %v", target.addr, err))
	}
	advice := "it listens on no socket or address this command can use; stop it, or run this command with --attach"
	if len(tried) > 0 {
		advice = "it cannot be reached (" + strings.Join(tried, "; ") + "); stop it, or run this command with --attach and a token"
	}
	return nil, fmt.Errorf("%w: %s", locked, advice)
}

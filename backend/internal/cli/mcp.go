package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"
	"github.com/agents-os/agents/backend/internal/mcpserve"
)

type mcpFlags struct {
	clientFlags
	offlineModel string
}

func (a *app) mcpCommand() *cobra.Command {
	var mf mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp [--attach URL|PATH]",
		Short: "Serve the agents as MCP tools over stdio (embedded server, or --attach to a running one)",
		Long: `Serve the agents as MCP tools on stdin and stdout, for an MCP client
that starts this command. Each root agent is a tool ask_<slug> that runs a
prompt and returns the final answer and the session id; give the id back
as session_id to continue the conversation.

Without --attach it starts the server inside this process, as serve would
(the same config, agents and database). With --attach it serves the agents
of a running server, acting as the owner of the token. stdout carries the
protocol only: logs go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseEmbeddedFlags(cmd, mf.clientFlags); err != nil {
				return err
			}
			return a.serveMCP(cmd.Context(), cmd.InOrStdin(), mf)
		},
	}
	mf.addClientFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&a.flags.DB, "db", "", "SQLite file of the embedded server (default $XDG_DATA_HOME/agents/agents.db)")
	f.StringVar(&mf.offlineModel, "offline-model", "", "the model of agents whose API key is not configured: a URL, or an offline model's rules file (embedded server)")
	a.addModelFlags(cmd)
	return cmd
}

// serveMCP speaks MCP on in and stdout until the client closes in or a
// signal comes.
func (a *app) serveMCP(ctx context.Context, in io.Reader, mf mcpFlags) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var params map[string]string
	if mf.attach == "" || a.flags.ParamsFile != "" {
		res, err := a.resolve()
		if err != nil {
			return err
		}
		if params, err = res.LoadParams(); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return a.withClientOptions(ctx, mf.clientFlags, servingOptions(mf.offlineModel, log), func(ctx context.Context, c *client.Client) error {
		srv := mcpserve.New(mcpserve.Options{Client: c, Params: params, Version: Version, Log: log})
		if err := srv.Start(ctx); err != nil {
			return err
		}
		defer srv.Close()
		err := srv.Serve(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{a.stdout}})
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return nil // a signal, or the client closed stdin: both end the server
		}
		return err
	})
}

// nopWriteCloser leaves stdout open when the MCP connection closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

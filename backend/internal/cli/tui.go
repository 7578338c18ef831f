package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"
	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/tui"
)

type tuiFlags struct {
	clientFlags
	session      string
	keymapFile   string
	logFile      string
	offlineModel string
}

func (a *app) tuiCommand() *cobra.Command {
	var tf tuiFlags
	cmd := &cobra.Command{
		Use:   "tui [--attach URL|PATH]",
		Short: "Open the terminal UI (embedded server, or --attach to a running one)",
		Long: `Open the terminal UI.

Without --attach it starts the server inside this process, as serve would
(the same config, agents and database, and the runs a previous server left
running resume), and stops it on quit: the runs this TUI started are asked
to stop first. With --attach it uses a running server and leaves
everything running when it quits; a server that cannot be reached, is not
an agents server or refuses the token is reported before the screen is
taken over.

Logs, the embedded server's included, go to --log-file, never to the
screen.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseEmbeddedFlags(cmd, tf.clientFlags); err != nil {
				return err
			}
			return a.tui(cmd.Context(), tf)
		},
	}
	tf.addClientFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&tf.session, "session", "", "open this session at start (an id or a unique prefix)")
	f.StringVar(&tf.keymapFile, "keymap", "", `keymap file, a JSON object from action to a list of keys (see docs/tui.md)`)
	f.StringVar(&tf.logFile, "log-file", "", "log file (default tui.log in the data directory, as agents paths shows)")
	f.StringVar(&a.flags.DB, "db", "", "SQLite file of the embedded server (default $XDG_DATA_HOME/agents/agents.db)")
	f.StringVar(&tf.offlineModel, "offline-model", "", "the model of agents whose API key is not configured: a URL, or an offline model's rules file (embedded server)")
	a.addModelFlags(cmd)
	return cmd
}

// tuiLogName is the TUI's log file in the data directory.
const tuiLogName = "tui.log"

// tuiLogFile is where the TUI logs by default.
func tuiLogFile(res *config.Resolved) string {
	return filepath.Join(res.DataDir, tuiLogName)
}

// tui runs the terminal UI on the server tf names, or on one started in
// this process.
func (a *app) tui(ctx context.Context, tf tuiFlags) error {
	// A closed terminal (SIGHUP) or a SIGTERM ends the TUI like quitting,
	// so an embedded server still shuts down cleanly.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	res, err := a.resolve()
	if err != nil {
		return err
	}
	logPath := tf.logFile
	if logPath == "" {
		logPath = tuiLogFile(res)
	}
	logFile, err := openLog(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	opts := tui.Options{SessionID: tf.session, KeymapFile: tf.keymapFile, LogFile: logPath}

	if tf.attach != "" {
		c, err := a.attach(ctx, tf.clientFlags)
		if err != nil {
			return err
		}
		defer c.Close()
		if opts.SessionID, err = a.tuiSession(ctx, c, tf.session); err != nil {
			return err
		}
		return tui.Run(ctx, c, opts)
	}

	log := slog.New(slog.NewTextHandler(logFile, nil))
	for _, w := range res.Warnings {
		log.Warn("config", "problem", w.Error())
	}
	c, err := a.dialEmbedded(ctx, tf.clientFlags, servingOptions(tf.offlineModel, log))
	if err != nil {
		return err
	}
	defer c.Close()
	if opts.SessionID, err = a.tuiSession(ctx, c, tf.session); err != nil {
		return err
	}
	opts.StopOnQuit = true
	if err := tui.Run(ctx, c, opts); err != nil {
		return fmt.Errorf("%w (log: %s)", err, logPath)
	}
	return nil
}

// tuiSession is the session --session names (an id or a unique prefix),
// found before the screen is taken over so a mistake reads as an error.
func (a *app) tuiSession(ctx context.Context, c *client.Client, arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	id, err := resolveSession(ctx, c, arg)
	if err != nil {
		return "", fmt.Errorf("--session: %w", err)
	}
	return id, nil
}

// openLog opens path for appending, creating it (and its directory)
// readable by the user only: a log may quote what sessions say.
func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("--log-file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--log-file: %w", err)
	}
	return f, nil
}

// Package tui is the terminal UI of agents: a bubbletea program that is a
// client of the protocol like any other. It is handed a client and never
// knows whether the server runs in this process or elsewhere.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/api/client"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/link"
	"github.com/agents-os/agents/tui/internal/ui"
)

// Options tune a TUI.
type Options struct {
	// SessionID opens this session at start.
	SessionID string
	// StopOnQuit asks the runs this TUI started, still running when it
	// quits, to stop (a StopRun mail each). An embedded TUI sets it: its
	// server goes away with it.
	StopOnQuit bool
	// KeymapFile overrides the default keys.
	KeymapFile string
	// LogFile receives the TUI's log; never the screen.
	LogFile string
	// Input and Output default to the terminal.
	Input  io.Reader
	Output io.Writer
}

// Run shows the TUI until the user quits or ctx ends.
func Run(ctx context.Context, c *client.Client, opts Options) error {
	km, err := keys.Load(opts.KeymapFile)
	if err != nil {
		return err
	}
	log, closeLog, err := openLog(opts.LogFile)
	if err != nil {
		return err
	}
	defer closeLog()
	// Whatever logs through the default logger while the screen is taken
	// goes to the file too; the previous default comes back afterwards.
	prev := slog.Default()
	slog.SetDefault(log)
	defer slog.SetDefault(prev)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := ui.New(ui.Config{
		Ctx:        ctx,
		Client:     link.New(c),
		Keys:       km,
		SessionID:  opts.SessionID,
		StopOnQuit: opts.StopOnQuit,
		Log:        log,
		Redraw:     5 * time.Second,
	})
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	p := tea.NewProgram(m, popts...)

	go ui.Forward(m.Subscribe(ctx), p.Send)

	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		// ctx ended: the caller asked the TUI to go, which is no failure.
		return nil
	}
	if err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// openLog returns the TUI's logger: JSON lines into path, or nowhere when
// no path is given, since the screen is never a place for logs.
func openLog(path string) (*slog.Logger, func(), error) {
	if path == "" {
		return slog.New(slog.DiscardHandler), func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	return slog.New(slog.NewJSONHandler(f, nil)), func() { f.Close() }, nil
}

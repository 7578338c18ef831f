// Package tui is the terminal UI of agents: a bubbletea program that is a
// client of the protocol like any other. It is handed a client and never
// knows whether the server runs in this process or elsewhere.
package tui

import (
	"context"
	"errors"
	"io"

	"github.com/agents-os/agents/api/client"
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
	return errors.New("the terminal UI is not built yet")
}

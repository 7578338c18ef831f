// Package msgs holds the messages the parts of the terminal UI send each
// other through bubbletea: what the event subscription delivers, and
// what a screen asks of the shell around it.
package msgs

import (
	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Event is one event of the subscription: the shell hands it to what
// shows its session, or, for a change of the agents, to the Agents tab.
type Event struct{ Event *agentsv1.Event }

// Snapshot says events may have been missed: the lists and the
// conversations refetch what they show.
type Snapshot struct{ Snapshot *agentsv1.Snapshot }

// Conn is a change of the connection to the server.
type Conn struct{ State client.ConnState }

// OpenSession asks the shell to show a session's conversation, remembering
// the current one so Back returns to it. The transcript has the keys,
// so a list's letters do not type into the composer; Write gives them
// to the composer instead, for a session made to be written in (a fork).
type OpenSession struct {
	ID    string
	Write bool
}

// Created says the conversation of a new session stored it, with its
// first message: the session exists from now on, with this id.
type Created struct{ ID string }

// Back asks the shell to close the current screen.
type Back struct{}

// Status is a line for the status bar: a result or an error.
type Status struct {
	Text string
	Err  error
}

// Say is the command that puts a result, or an error, in the status bar.
func Say(text string, err error) tea.Cmd {
	return func() tea.Msg { return Status{Text: text, Err: err} }
}

// Started says this TUI created a session (or started a run in it), so
// an embedded TUI stops it when it quits.
type Started struct{ ID string }

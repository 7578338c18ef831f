package agentsview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/editor"
	"github.com/agents-os/agents/tui/internal/msgs"
)

// Editing a stored agent, as kubectl edit does: its definition goes to a
// file, the editor runs in the TUI's terminal, and what it saved is sent
// with UpdateAgent. Broken JSON, or a definition the server refuses,
// opens the editor again with the error on top; an unchanged or emptied
// file cancels.

// editTimeout bounds each call of an edit.
const editTimeout = 30 * time.Second

// editing is the edit under way: the agent, the version it started from
// (so a change made meanwhile elsewhere is not overwritten), and the
// document across the editor's runs.
type editing struct {
	slug    string
	version int64
	doc     *editor.Edit
}

// editFetched is the agent fetched to be edited.
type editFetched struct {
	agent *agentsv1.AgentDescriptor
	err   error
}

// editReady is the file written for the editor.
type editReady struct {
	path string
	err  error
}

// editDone is what the editor saved.
type editDone struct {
	saved []byte
	err   error
}

// editSaved is UpdateAgent's answer.
type editSaved struct {
	agent *agentsv1.AgentDescriptor
	err   error
}

// Editing reports whether an edit is under way.
func (m *Agents) Editing() bool { return m.edit != nil }

// startEdit edits the selected agent, when it is a stored one: its
// definition is fetched again, so the edit starts from the current
// version.
func (m *Agents) startEdit() tea.Cmd {
	a := m.selected()
	switch {
	case a == nil:
		return nil
	case m.edit != nil:
		return msgs.Say("an agent is being edited already", nil)
	case a.GetSource() != agentsv1.AgentSource_AGENT_SOURCE_STORED:
		return msgs.Say("", fmt.Errorf("%s is read-only: a file agent; change %s, then reload agents", a.GetSlug(), a.GetFile()))
	}
	ctx, c, slug := m.ctx, m.c, a.GetSlug()
	m.edit = &editing{slug: slug}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, editTimeout)
		defer cancel()
		res, err := c.GetAgent(ctx, connect.NewRequest(&agentsv1.GetAgentRequest{Slug: slug}))
		if err != nil {
			return editFetched{err: err}
		}
		return editFetched{agent: res.Msg.GetAgent()}
	}
}

// openEditor writes the document, with last's error on top, for the
// editor to open.
func (m *Agents) openEditor(last error) tea.Cmd {
	content := m.edit.doc.Content(last)
	return func() tea.Msg {
		path, err := editor.TempFile(content)
		return editReady{path: path, err: err}
	}
}

// handleEdit takes the messages of an edit.
func (m *Agents) handleEdit(msg tea.Msg) tea.Cmd {
	e := m.edit
	switch msg := msg.(type) {
	case editFetched:
		if msg.err != nil {
			m.edit = nil
			return msgs.Say("", fmt.Errorf("edit %s: %w", e.slug, client.Describe(msg.err)))
		}
		a := msg.agent
		e.version = a.GetVersion()
		e.doc = editor.New(a.GetDefinition(), fmt.Sprintf("Agent %s, version %d. Saved, it becomes version %d.", e.slug, e.version, e.version+1))
		return m.openEditor(nil)
	case editReady:
		if msg.err != nil {
			m.edit = nil
			return msgs.Say("", fmt.Errorf("editor: %w", msg.err))
		}
		path := msg.path
		return tea.ExecProcess(editor.Cmd(os.Getenv, path), func(err error) tea.Msg {
			defer os.Remove(path)
			if err != nil {
				return editDone{err: err}
			}
			saved, err := os.ReadFile(path)
			return editDone{saved: saved, err: err}
		})
	case editDone:
		if msg.err != nil {
			m.edit = nil
			return msgs.Say("", fmt.Errorf("editor: %w", msg.err))
		}
		doc, outcome := e.doc.Take(msg.saved)
		switch outcome {
		case editor.Emptied:
			m.edit = nil
			return msgs.Say("edit of "+e.slug+" cancelled: the file was emptied", nil)
		case editor.Unchanged:
			m.edit = nil
			return msgs.Say("edit of "+e.slug+" cancelled: no change", nil)
		}
		if err := editor.Valid(doc); err != nil {
			return m.openEditor(err)
		}
		return m.update(doc)
	case editSaved:
		var ce *connect.Error
		switch {
		case errors.As(msg.err, &ce) && ce.Code() == connect.CodeInvalidArgument:
			return m.openEditor(client.Describe(msg.err))
		case errors.As(msg.err, &ce) && ce.Code() == connect.CodeAborted:
			// Changed elsewhere since the edit began: nothing is
			// overwritten.
			m.edit = nil
			return msgs.Say("", fmt.Errorf("%s changed while you edited it, nothing saved: edit it again", e.slug))
		case msg.err != nil:
			m.edit = nil
			return msgs.Say("", fmt.Errorf("save %s: %w", e.slug, client.Describe(msg.err)))
		}
		m.edit = nil
		return tea.Batch(msgs.Say(fmt.Sprintf("saved %s, version %d", e.slug, msg.agent.GetVersion()), nil), m.Refresh())
	}
	return nil
}

// update sends the edited definition, for the version the edit started
// from.
func (m *Agents) update(doc string) tea.Cmd {
	ctx, c := m.ctx, m.c
	req := &agentsv1.UpdateAgentRequest{Slug: m.edit.slug, Definition: doc, ExpectedVersion: &m.edit.version}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, editTimeout)
		defer cancel()
		res, err := c.UpdateAgent(ctx, connect.NewRequest(req))
		if err != nil {
			return editSaved{err: err}
		}
		return editSaved{agent: res.Msg.GetAgent()}
	}
}

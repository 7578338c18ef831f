package conversation

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/transcript"
	"github.com/agents-os/agents/tui/internal/units"
)

// compactTimeout bounds Compact: on a session with no run, the server
// answers once the summary is written, which is a model call.
const compactTimeout = 5 * time.Minute

// openCompact asks for the compaction's instruction; enter with none
// compacts all the same.
func (s *Screen) openCompact() tea.Cmd {
	if s.unborn() {
		return status("nothing to compact: the session starts with its first message", nil)
	}
	s.compact = newLinePrompt(s.st, "compact, keeping: ", "", "what the summary must keep (optional)",
		"enter compacts: older turns go to the model as a summary, nothing is deleted · esc cancels")
	return s.setFocus(focusCompact)
}

func (s *Screen) compactKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case s.is(msg, keys.Back):
		s.compact = nil
		return s.setFocus(focusView)
	case msg.Code == tea.KeyEnter:
		instruction := strings.TrimSpace(s.compact.in.Value())
		s.compact = nil
		return tea.Batch(s.setFocus(focusView), s.compactNow(instruction), status("compacting…", nil))
	}
	return s.compact.Update(msg)
}

// compactedMsg is the outcome of Compact.
type compactedMsg struct {
	id   string
	resp *agentsv1.CompactResponse
	err  error
}

func (s *Screen) compactNow(instruction string) tea.Cmd {
	c, id := s.c, s.id
	req := &agentsv1.CompactRequest{SessionId: id, Instruction: instruction}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), compactTimeout)
		defer cancel()
		resp, err := c.Compact(ctx, connect.NewRequest(req))
		m := compactedMsg{id: id, err: err}
		if err == nil {
			m.resp = resp.Msg
		}
		return m
	}
}

// compacted says what Compact did; the marker itself arrives with the
// session's events.
func (s *Screen) compacted(m compactedMsg) tea.Cmd {
	if m.err != nil {
		return status("", fmt.Errorf("compact: %w", client.Describe(m.err)))
	}
	if m.resp.GetPending() {
		return status("will compact before the next step", nil)
	}
	if c := m.resp.GetCompaction().GetCompaction(); c != nil {
		return status("compacted: "+transcript.CompactionText(c), nil)
	}
	return status("compacted", nil)
}

// compactingLabel is the header's status while a compaction's summary
// is being written.
func compactingLabel(c *agentsv1.CompactionStarted) string {
	if n := c.GetTokens(); n > 0 {
		return "◐ compacting " + units.Grouped(n) + " tokens…"
	}
	return "◐ compacting…"
}

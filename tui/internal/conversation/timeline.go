package conversation

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/timeline"
)

// The timeline nests under each helper call the runs its helper session
// made, as the web app's does: the helpers' turns are fetched while the
// timeline shows, once for a helper that has stopped, again each tick
// for one that runs.

// maxHelperFetches bounds the helper sessions fetched for one timeline:
// a wider tree shows the first ones' runs.
const maxHelperFetches = 50

// helperTurns is what the timeline knows of a helper session.
type helperTurns struct {
	turns    []*agentsv1.Turn
	running  bool
	loaded   bool
	fetching bool
}

// helperMsg is a helper session fetched for the timeline of session id.
type helperMsg struct {
	id, child string
	session   *agentsv1.Session
	err       error
}

func (m helperMsg) Session() string { return m.id }
func (helperMsg) reply()            {}

// timelineRuns derives the session's runs with its helpers' nested.
func (s *Screen) timelineRuns() []*timeline.Bar {
	runs := timeline.Of(s.tr.Turns(), s.status() == agentsv1.SessionStatus_SESSION_STATUS_RUNNING)
	timeline.Nest(runs, s.tr.ChildOf, func(child string) []*timeline.Bar {
		if h := s.helpers[child]; h != nil && h.loaded {
			return timeline.Of(h.turns, h.running)
		}
		return nil
	})
	return runs
}

// fetchHelpers asks for the helper sessions the timeline names that it
// has not loaded, or that were running when last loaded.
func (s *Screen) fetchHelpers() tea.Cmd {
	if s.helpers == nil {
		s.helpers = map[string]*helperTurns{}
	}
	var cmds []tea.Cmd
	var walk func(bars []*timeline.Bar)
	walk = func(bars []*timeline.Bar) {
		for _, b := range bars {
			if b.Kind == timeline.Helper && b.Child != "" {
				h := s.helpers[b.Child]
				if h == nil && len(s.helpers) < maxHelperFetches {
					h = &helperTurns{}
					s.helpers[b.Child] = h
				}
				if h != nil && !h.fetching && (!h.loaded || h.running) {
					h.fetching = true
					cmds = append(cmds, s.fetchHelper(b.Child))
				}
			}
			walk(b.Children)
		}
	}
	walk(s.timelineRuns())
	return tea.Batch(cmds...)
}

func (s *Screen) fetchHelper(child string) tea.Cmd {
	c, id := s.c, s.id
	return func() tea.Msg {
		resp, err := call(func(ctx context.Context) (*connect.Response[agentsv1.GetSessionResponse], error) {
			return c.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: child, LastTurns: recentTurns}))
		})
		m := helperMsg{id: id, child: child, err: err}
		if err == nil {
			m.session = resp.Msg.GetSession()
		}
		return m
	}
}

// helperLoaded keeps a helper's turns; a helper that cannot be read
// (deleted, or another owner's) stays without runs.
func (s *Screen) helperLoaded(m helperMsg) {
	h := s.helpers[m.child]
	if h == nil {
		return
	}
	h.fetching, h.loaded = false, true
	if m.err != nil {
		h.turns, h.running = nil, false
		return
	}
	h.turns = m.session.GetTurns()
	h.running = m.session.GetMeta().GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_RUNNING
}

// renderTimeline draws the session's runs as a waterfall, the newest at
// the bottom, under a line that says how to go back.
func (s *Screen) renderTimeline(width, height int) string {
	lines := timeline.Render(s.timelineRuns(), width, time.Now(), time.Local)
	head := s.st.Muted.Render(fmt.Sprintf("timeline of the loaded turns · %s or esc: the transcript", s.keyName(keys.Timeline)))
	if len(lines) > height-1 {
		lines = lines[len(lines)-(height-1):]
	}
	return fitLines(append([]string{head}, lines...), width, height)
}

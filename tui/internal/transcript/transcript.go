// Package transcript renders a session's conversation: its stored turns,
// the turn in progress and what live events add to it, as lines for a
// given width. The conversation screen scrolls over these lines; the view
// keeps every turn's lines until the turn or the width changes, so a long
// session costs only what changed.
package transcript

import (
	"strings"

	"charm.land/lipgloss/v2"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
)

// View is the transcript of one session.
type View struct {
	st theme.TranscriptStyles

	first int // index of turns[0]
	total int // every turn of the session, also those not loaded
	turns []*agentsv1.Turn
	live  *agentsv1.TurnInProgress
	fail  string // why the last run failed, shown under the last turn

	selected int
	expanded map[int]bool

	width  int
	lines  []string
	starts []int // first line of each loaded turn; the live turn follows
	dirty  bool
}

// New returns an empty transcript drawn with st.
func New(st theme.TranscriptStyles) *View {
	return &View{st: st, selected: -1, expanded: map[int]bool{}, dirty: true}
}

// Load replaces everything with the session s.
func (v *View) Load(s *agentsv1.Session) {
	v.first = int(s.GetFirstTurnIndex())
	v.turns = append([]*agentsv1.Turn(nil), s.GetTurns()...)
	v.total = max(int(s.GetMeta().GetTurnCount()), v.first+len(v.turns))
	v.live = s.GetInProgress()
	v.fail = ""
	if s.GetMeta().GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_FAILED {
		v.fail = s.GetMeta().GetStatusReason()
	}
	v.dirty = true
}

// Prepend adds an older page of turns, those just before FirstIndex.
func (v *View) Prepend(turns []*agentsv1.Turn) {
	if len(turns) == 0 {
		return
	}
	v.turns = append(append([]*agentsv1.Turn(nil), turns...), v.turns...)
	v.first -= len(turns)
	v.dirty = true
}

// Apply folds a live event of this session into the transcript and says
// whether the output changed.
func (v *View) Apply(ev *agentsv1.Event) bool {
	switch b := ev.GetBody().(type) {
	case *agentsv1.Event_TextDelta:
		v.liveTurn(int(b.TextDelta.GetTurnIndex())).Text += b.TextDelta.GetText()
	case *agentsv1.Event_ThinkingDelta:
		v.liveTurn(int(b.ThinkingDelta.GetTurnIndex())).Thinking += b.ThinkingDelta.GetText()
	case *agentsv1.Event_SessionUpdated:
		t := b.SessionUpdated.GetHeadTurn()
		if t == nil {
			return false
		}
		v.store(t)
		v.total = max(v.total, int(b.SessionUpdated.GetMeta().GetTurnCount()))
	case *agentsv1.Event_SessionFailed:
		v.fail = b.SessionFailed.GetReason()
		v.live = nil
	case *agentsv1.Event_RunStopped:
		v.live = nil
	default:
		return false
	}
	v.dirty = true
	return true
}

func (v *View) liveTurn(index int) *agentsv1.TurnInProgress {
	if v.live == nil || int(v.live.GetTurnIndex()) != index {
		v.live = &agentsv1.TurnInProgress{TurnIndex: int32(index)}
		v.fail = ""
	}
	return v.live
}

// store puts a stored turn in its place; it is the truth about its index,
// so a partial turn of the same index goes.
func (v *View) store(t *agentsv1.Turn) {
	i := int(t.GetIndex()) - v.first
	switch {
	case i < 0:
		return
	case i < len(v.turns):
		v.turns[i] = t
	case i == len(v.turns):
		v.turns = append(v.turns, t)
	default:
		return
	}
	v.total = max(v.total, int(t.GetIndex())+1)
	if v.live != nil && v.live.GetTurnIndex() <= t.GetIndex() {
		v.live = nil
	}
}

// Lines renders the whole transcript at width.
func (v *View) Lines(width int) []string {
	if !v.dirty && width == v.width {
		return v.lines
	}
	v.width, v.dirty = width, false
	v.lines = v.lines[:0]
	v.starts = v.starts[:0]
	for _, t := range v.turns {
		v.starts = append(v.starts, len(v.lines))
		v.lines = append(v.lines, v.renderTurn(t, width)...)
	}
	if v.live != nil {
		v.lines = append(v.lines, wrap(v.st.Agent.Render("agent")+" …", width)...)
		if v.live.GetText() != "" {
			v.lines = append(v.lines, wrap(v.live.GetText(), width)...)
		}
	}
	if v.fail != "" {
		v.lines = append(v.lines, wrap(v.st.ToolError.Render("failed: "+v.fail), width)...)
	}
	return v.lines
}

func (v *View) renderTurn(t *agentsv1.Turn, width int) []string {
	var out []string
	switch k := t.GetKind().(type) {
	case *agentsv1.Turn_User:
		out = append(out, v.st.User.Render("you"))
		if k.User.GetText() != "" {
			out = append(out, wrap(k.User.GetText(), width)...)
		}
		for _, r := range k.User.GetToolResults() {
			out = append(out, wrap(v.st.Tool.Render("← "+r.GetName()+": "+firstLine(r.GetText())), width)...)
		}
	case *agentsv1.Turn_Llm:
		out = append(out, v.st.Agent.Render("agent"))
		if k.Llm.GetText() != "" {
			out = append(out, wrap(k.Llm.GetText(), width)...)
		}
		for _, c := range k.Llm.GetToolCalls() {
			out = append(out, wrap(v.st.Tool.Render("→ "+c.GetName()+" "+c.GetArguments()), width)...)
		}
	}
	return append(out, "")
}

// TurnStart is the first line of the turn with that index, -1 when the
// turn is not loaded.
func (v *View) TurnStart(index int) int {
	v.Lines(v.width)
	i := index - v.first
	if i < 0 || i >= len(v.starts) {
		return -1
	}
	return v.starts[i]
}

// TurnAt is the index of the turn shown at line, -1 when there is none.
func (v *View) TurnAt(line int) int {
	v.Lines(v.width)
	if line < 0 || len(v.starts) == 0 {
		return -1
	}
	i := 0
	for i+1 < len(v.starts) && v.starts[i+1] <= line {
		i++
	}
	return v.first + i
}

// Select highlights the turn with that index; -1 highlights none.
func (v *View) Select(index int) {
	if index != v.selected {
		v.selected = index
		v.dirty = true
	}
}

// Selected is the index of the highlighted turn, -1 when none is.
func (v *View) Selected() int { return v.selected }

// Toggle expands or collapses the thinking and tool details of a turn.
func (v *View) Toggle(index int) {
	v.expanded[index] = !v.expanded[index]
	v.dirty = true
}

// Children lists the child sessions of the helper calls in that turn.
func (v *View) Children(index int) []string {
	t := v.turn(index)
	var ids []string
	for _, r := range t.GetUser().GetToolResults() {
		if r.GetChildSessionId() != "" {
			ids = append(ids, r.GetChildSessionId())
		}
	}
	return ids
}

// Markdown is a turn as markdown, for the clipboard.
func (v *View) Markdown(index int) string {
	t := v.turn(index)
	switch k := t.GetKind().(type) {
	case *agentsv1.Turn_User:
		return k.User.GetText()
	case *agentsv1.Turn_Llm:
		return k.Llm.GetText()
	}
	return ""
}

// FirstIndex is the lowest index of the turns loaded.
func (v *View) FirstIndex() int { return v.first }

// Count is the number of turns of the session, loaded or not.
func (v *View) Count() int { return v.total }

func (v *View) turn(index int) *agentsv1.Turn {
	i := index - v.first
	if i < 0 || i >= len(v.turns) {
		return nil
	}
	return v.turns[i]
}

func wrap(s string, width int) []string {
	if width <= 0 {
		width = 80
	}
	return strings.Split(lipgloss.NewStyle().Width(width).Render(s), "\n")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

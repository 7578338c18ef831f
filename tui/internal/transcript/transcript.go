// Package transcript renders a session's conversation: its stored turns,
// the turn in progress and what live events add to them, as lines for a
// given width. The conversation screen scrolls over these lines. Every
// turn keeps its lines until its data, its state (expanded, selected) or
// the width changes, so a long session costs only what changed, and a
// streamed answer re-renders only its growing tail.
package transcript

import (
	"runtime"
	"sort"
	"strings"
	"sync"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
	"google.golang.org/protobuf/proto"
)

// View is the transcript of one session.
type View struct {
	st theme.TranscriptStyles
	// mds are the markdown renderers, one per worker that renders turns:
	// they are not safe for concurrent use.
	mds     []*markdown
	workers int

	agent  string // slug of the session's agent, named on its answers
	status agentsv1.SessionStatus
	reason string // why the session is in its status

	first int      // index of turns[0]
	total int      // turns of the session, loaded or not
	turns []*entry // consecutive; an entry without a turn is one not received
	live  *live    // the turn in progress, nil without one
	calls calls

	selected int
	expanded map[int]bool

	// The assembled output at width: every turn's lines, a blank line
	// between turns, then the footer. starts[i] is the first line of
	// turns[i], liveStart that of the live turn (-1 without one).
	width     int
	lines     []string
	starts    []int
	liveStart int
	dirty     bool
}

// entry is one stored turn and its rendered lines.
type entry struct {
	turn *agentsv1.Turn
	lines
}

// lines caches one turn's output: the content at width, and the same with
// the gutter that shows whether the turn is selected.
type lines struct {
	width    int
	content  []string // nil when stale
	framed   []string
	selected bool // the state framed was drawn for
}

func (l *lines) invalidate() { l.content, l.framed = nil, nil }

// live is the turn in progress: what the model has streamed so far.
type live struct {
	turn *agentsv1.TurnInProgress
	text stream
	lines
}

// New returns an empty transcript drawn with st.
func New(st theme.TranscriptStyles) *View {
	return &View{
		st:       st,
		mds:      []*markdown{newMarkdown(st.Markdown)},
		workers:  runtime.GOMAXPROCS(0),
		calls:    calls{},
		selected: -1,
		expanded: map[int]bool{},
		dirty:    true,
	}
}

// Restyle draws with st from now on (the theme changed with the
// terminal's background): every line kept was drawn with the old styles,
// the streamed answer's finished blocks too.
func (v *View) Restyle(st theme.TranscriptStyles) {
	v.st = st
	v.mds = []*markdown{newMarkdown(st.Markdown)}
	for _, e := range v.turns {
		e.invalidate()
	}
	if v.live != nil {
		v.live.invalidate()
		v.live.text = stream{}
	}
	v.dirty = true
}

// Load replaces everything with the session s: its turns from
// s.FirstTurnIndex on, the turn in progress and the deferred calls. The
// selection and the expanded turns stay. Loading the same session again
// (a refetch after missed events) keeps the lines of the turns that did
// not change.
func (v *View) Load(s *agentsv1.Session) {
	meta := s.GetMeta()
	old := map[int32]*entry{}
	if meta.GetAgent() == v.agent {
		for _, e := range v.turns {
			if e.turn != nil {
				old[e.turn.GetIndex()] = e
			}
		}
	}
	v.agent, v.status, v.reason = meta.GetAgent(), meta.GetStatus(), meta.GetStatusReason()
	v.first = int(s.GetFirstTurnIndex())
	v.turns = make([]*entry, 0, len(s.GetTurns()))
	v.calls = calls{}
	v.live = nil
	for _, t := range s.GetTurns() {
		e := old[t.GetIndex()]
		// An answer's lines depend on its calls' results too: only a
		// turn drawn from itself alone is kept.
		if e == nil || len(t.GetLlm().GetToolCalls()) > 0 || !proto.Equal(e.turn, t) {
			e = &entry{turn: t}
		}
		v.turns = append(v.turns, e)
		v.record(t)
	}
	v.total = max(int(meta.GetTurnCount()), v.first+len(v.turns))
	for _, d := range s.GetPendingCalls() {
		v.deferred(d)
	}
	if ip := s.GetInProgress(); ip != nil {
		if ip.GetText() != "" || ip.GetThinking() != "" || len(ip.GetToolCalls()) > 0 {
			// The model is answering.
			v.live = &live{turn: ip}
			v.calls.asked(int(ip.GetTurnIndex()), ip.GetToolCalls())
		} else if e := v.entry(int(ip.GetTurnIndex()) - 1); e != nil {
			// The calls of the stored answer run; some have finished.
			for _, tc := range e.turn.GetLlm().GetToolCalls() {
				if c := v.calls[tc.GetId()]; c.result == nil && c.deferred == "" {
					c.running = true
				}
			}
		}
		v.calls.answered(ip.GetToolResults())
	}
	v.dirty = true
}

// Prepend adds an older page of turns, those just before FirstIndex.
func (v *View) Prepend(turns []*agentsv1.Turn) {
	// Keep only the consecutive run that ends right before the first
	// loaded turn: anything else would break the index arithmetic.
	end := len(turns)
	for end > 0 && int(turns[end-1].GetIndex()) >= v.first {
		end--
	}
	start := end
	for start > 0 && int(turns[start-1].GetIndex()) == v.first-(end-start)-1 {
		start--
	}
	page := turns[start:end]
	if len(page) == 0 || int(page[len(page)-1].GetIndex()) != v.first-1 {
		return
	}
	added := make([]*entry, len(page), len(page)+len(v.turns))
	for i, t := range page {
		added[i] = &entry{turn: t}
		v.record(t)
	}
	v.turns = append(added, v.turns...)
	v.first -= len(page)
	v.dirty = true
}

// record indexes the calls and results of a stored turn, and marks stale
// the turns that draw them.
func (v *View) record(t *agentsv1.Turn) {
	switch k := t.GetKind().(type) {
	case *agentsv1.Turn_Llm:
		v.calls.asked(int(t.GetIndex()), k.Llm.GetToolCalls())
	case *agentsv1.Turn_User:
		for _, owner := range v.calls.answered(k.User.GetToolResults()) {
			v.touch(owner)
		}
	}
}

func (v *View) deferred(d *agentsv1.DeferredCall) {
	c := v.calls.get(d.GetCall().GetId())
	if c.call == nil {
		c.call = d.GetCall()
	}
	if c.result == nil {
		c.deferred = strings.ReplaceAll(d.GetReason(), "_", " ")
	}
	v.touch(c.owner)
}

// touch marks stale the turn with that index.
func (v *View) touch(index int) {
	if e := v.entry(index); e != nil {
		e.invalidate()
	} else if v.live != nil && int(v.live.turn.GetTurnIndex()) == index {
		v.live.invalidate()
	}
	v.dirty = true
}

// Apply folds a live event of this session into the transcript and says
// whether the output changed.
func (v *View) Apply(ev *agentsv1.Event) bool {
	switch b := ev.GetBody().(type) {
	case *agentsv1.Event_TextDelta:
		if b.TextDelta.GetText() == "" || v.entry(int(b.TextDelta.GetTurnIndex())) != nil {
			return false // nothing, or a delta of a turn already stored
		}
		l := v.liveTurn(int(b.TextDelta.GetTurnIndex()))
		l.turn.Text += b.TextDelta.GetText()
		l.invalidate()
	case *agentsv1.Event_ThinkingDelta:
		if b.ThinkingDelta.GetText() == "" || v.entry(int(b.ThinkingDelta.GetTurnIndex())) != nil {
			return false
		}
		l := v.liveTurn(int(b.ThinkingDelta.GetTurnIndex()))
		l.turn.Thinking += b.ThinkingDelta.GetText()
		l.invalidate()
	case *agentsv1.Event_ToolCallDelta:
		return v.written(b.ToolCallDelta)
	case *agentsv1.Event_ToolStarted:
		tc := b.ToolStarted.GetCall()
		c := v.calls.get(tc.GetId())
		if c.call == nil {
			c.call = tc
		}
		c.running = c.result == nil
		v.touch(c.owner)
	case *agentsv1.Event_ToolProgressed:
		c := v.calls.get(b.ToolProgressed.GetCallId())
		c.progress = b.ToolProgressed.GetMessage()
		v.touch(c.owner)
	case *agentsv1.Event_ToolCompleted:
		for _, owner := range v.calls.answered([]*agentsv1.ToolResult{b.ToolCompleted.GetResult()}) {
			v.touch(owner)
		}
	case *agentsv1.Event_SubcallStarted:
		c := v.calls.get(b.SubcallStarted.GetCallId())
		c.child, c.agent = b.SubcallStarted.GetChildSessionId(), b.SubcallStarted.GetAgent()
		v.touch(c.owner)
	case *agentsv1.Event_SubcallCompleted:
		c := v.calls.get(b.SubcallCompleted.GetCallId())
		c.child = b.SubcallCompleted.GetChildSessionId()
		v.touch(c.owner)
	case *agentsv1.Event_SubcallFailed:
		c := v.calls.get(b.SubcallFailed.GetCallId())
		c.child, c.childFailed = b.SubcallFailed.GetChildSessionId(), b.SubcallFailed.GetReason()
		v.touch(c.owner)
	case *agentsv1.Event_CallsDeferred:
		for _, d := range b.CallsDeferred.GetCalls() {
			v.deferred(d)
		}
	case *agentsv1.Event_SessionUpdated:
		return v.updated(b.SessionUpdated)
	case *agentsv1.Event_SessionCompacted:
		// session.updated brings the same turn; whichever comes first
		// puts it in its place.
		return v.updated(&agentsv1.SessionUpdated{Meta: b.SessionCompacted.GetMeta(), HeadTurn: b.SessionCompacted.GetTurn()})
	case *agentsv1.Event_RunStopped:
		v.status, v.reason = b.RunStopped.GetStatus(), b.RunStopped.GetReason()
		v.endRun()
	case *agentsv1.Event_SessionFailed:
		v.status, v.reason = agentsv1.SessionStatus_SESSION_STATUS_FAILED, b.SessionFailed.GetReason()
		v.endRun()
	default:
		return false
	}
	v.dirty = true
	return true
}

// maxWrittenCalls bounds the calls of a turn being written, as the
// server does: a delta that claims a call beyond it is not grown into.
const maxWrittenCalls = 1024

// written folds a piece of a tool call the model is writing into the
// turn in progress: an id or a name replaces what was known, the
// arguments grow. The call is not stored, so what was written so far is
// the newest there is of it.
func (v *View) written(d *agentsv1.ToolCallDelta) bool {
	i, index := int(d.GetCallIndex()), int(d.GetTurnIndex())
	if i < 0 || i >= maxWrittenCalls || v.entry(index) != nil {
		return false // nonsense, or a delta of a turn already stored
	}
	l := v.liveTurn(index)
	for len(l.turn.ToolCalls) <= i {
		l.turn.ToolCalls = append(l.turn.ToolCalls, &agentsv1.ToolCall{})
	}
	was := l.turn.ToolCalls[i]
	tc := &agentsv1.ToolCall{Id: was.GetId(), Name: was.GetName(), Arguments: was.GetArguments() + d.GetArguments()}
	if id := d.GetCallId(); id != "" {
		tc.Id = id
	}
	if name := d.GetName(); name != "" {
		tc.Name = name
	}
	l.turn.ToolCalls[i] = tc
	v.calls.asked(index, []*agentsv1.ToolCall{tc})
	l.invalidate()
	v.dirty = true
	return true
}

// updated takes a session.updated: the summary, and the turn it added,
// which is the truth about its index: a partial turn there goes.
func (v *View) updated(u *agentsv1.SessionUpdated) bool {
	changed := false
	if m := u.GetMeta(); m != nil {
		if m.GetStatus() != v.status || m.GetStatusReason() != v.reason || m.GetAgent() != v.agent {
			v.status, v.reason, v.agent = m.GetStatus(), m.GetStatusReason(), m.GetAgent()
			changed = true
		}
		v.total = max(v.total, int(m.GetTurnCount()))
	}
	if t := u.GetHeadTurn(); t != nil {
		v.store(t)
		changed = true
	}
	if changed {
		v.dirty = true
	}
	return changed
}

// store puts a stored turn in its place.
func (v *View) store(t *agentsv1.Turn) {
	i := int(t.GetIndex()) - v.first
	if i < 0 {
		return
	}
	for len(v.turns) <= i {
		v.turns = append(v.turns, &entry{})
	}
	v.turns[i] = &entry{turn: t}
	v.record(t)
	v.total = max(v.total, int(t.GetIndex())+1)
	if v.live != nil && v.live.turn.GetTurnIndex() <= t.GetIndex() {
		v.live = nil
	}
}

// endRun forgets what only a run in flight has: the partial turn, and the
// running state of calls that will not report again.
func (v *View) endRun() {
	v.live = nil
	for _, c := range v.calls {
		if c.running {
			c.running, c.progress = false, ""
			v.touch(c.owner)
		}
	}
}

// liveTurn is the turn in progress with that index, a new one when the
// model started another.
func (v *View) liveTurn(index int) *live {
	if v.live == nil || int(v.live.turn.GetTurnIndex()) != index {
		v.live = &live{turn: &agentsv1.TurnInProgress{TurnIndex: int32(index)}}
		if v.status != agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
			v.status, v.reason = agentsv1.SessionStatus_SESSION_STATUS_RUNNING, ""
		}
	}
	return v.live
}

// Lines renders the whole transcript at width.
func (v *View) Lines(width int) []string {
	if !v.dirty && width == v.width {
		return v.lines
	}
	v.width, v.dirty = width, false
	gutter := v.gutter()
	cw := max(width-gutter, 8)
	out := make([]string, 0, len(v.lines)+8)
	v.starts = v.starts[:0]
	sep := func() {
		if len(out) > 0 && out[len(out)-1] != "" {
			out = append(out, "")
		}
	}
	v.renderStale(cw)
	for i, e := range v.turns {
		index := v.first + i
		if len(e.content) > 0 {
			sep()
		}
		v.starts = append(v.starts, len(out))
		out = append(out, v.frame(&e.lines, index)...)
	}
	v.liveStart = -1
	if l := v.live; l != nil {
		index := int(l.turn.GetTurnIndex())
		if l.content == nil || l.width != cw {
			l.width, l.framed = cw, nil
			t := &agentsv1.LlmTurn{Text: l.turn.GetText(), Thinking: l.turn.GetThinking(), ToolCalls: l.turn.GetToolCalls()}
			l.content = v.renderLLM(t, l.text.render(v.mds[0], t.Text, cw), cw, v.expanded[index], true)
		}
		sep()
		v.liveStart = len(out)
		out = append(out, v.frame(&l.lines, index)...)
	}
	if foot := v.renderFooter(cw); len(foot) > 0 {
		sep()
		pad := strings.Repeat(" ", gutter)
		for _, f := range foot {
			out = append(out, pad+f)
		}
	}
	v.lines = out
	return out
}

// renderStale renders the stored turns whose lines are stale. Many at once
// (a session just loaded, a resize) are shared among workers: markdown is
// most of the cost, and the turns are independent.
func (v *View) renderStale(width int) {
	var stale []*entry
	for _, e := range v.turns {
		if e.turn != nil && (e.content == nil || e.width != width) {
			e.width, e.framed = width, nil
			e.content = nil
			stale = append(stale, e)
		}
	}
	workers := min(v.workers, len(stale)/minPerWorker)
	if workers <= 1 {
		for _, e := range stale {
			e.content = v.renderTurn(v.mds[0], e.turn, width, v.expanded[int(e.turn.GetIndex())])
		}
		return
	}
	for len(v.mds) < workers {
		v.mds = append(v.mds, newMarkdown(v.st.Markdown))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			// Worker w takes every workers-th turn: the turns of a
			// session cost about the same.
			for i := w; i < len(stale); i += workers {
				e := stale[i]
				e.content = v.renderTurn(v.mds[w], e.turn, width, v.expanded[int(e.turn.GetIndex())])
			}
		})
	}
	wg.Wait()
}

// minPerWorker is the fewest stale turns worth another worker.
const minPerWorker = 16

// gutter is the width left free before every turn for the selection's
// frame.
func (v *View) gutter() int {
	return v.st.SelectedTurn.GetHorizontalFrameSize()
}

// frame puts the gutter before a turn's lines: blank, or the selection's
// frame for the selected turn.
func (v *View) frame(l *lines, index int) []string {
	sel := index == v.selected
	if l.framed != nil && l.selected == sel {
		return l.framed
	}
	l.selected = sel
	switch {
	case len(l.content) == 0:
		l.framed = []string{}
	case sel:
		l.framed = strings.Split(v.st.SelectedTurn.Render(strings.Join(l.content, "\n")), "\n")
	default:
		pad := strings.Repeat(" ", v.gutter())
		l.framed = make([]string, len(l.content))
		for i, c := range l.content {
			l.framed[i] = pad + c
		}
	}
	return l.framed
}

// TurnStart is the first line of the turn with that index in the last
// Lines, -1 when the turn is not loaded.
func (v *View) TurnStart(index int) int {
	v.Lines(v.width)
	if v.live != nil && index == int(v.live.turn.GetTurnIndex()) {
		return v.liveStart
	}
	i := index - v.first
	if i < 0 || i >= len(v.starts) {
		return -1
	}
	return v.starts[i]
}

// TurnAt is the index of the turn shown at a line of the last Lines (the
// blank line after a turn and the footer count as its own), -1 when no
// turn is loaded.
func (v *View) TurnAt(line int) int {
	v.Lines(v.width)
	if v.live != nil && line >= v.liveStart {
		return int(v.live.turn.GetTurnIndex())
	}
	i := sort.Search(len(v.starts), func(i int) bool { return v.starts[i] > line }) - 1
	if len(v.starts) == 0 {
		return -1
	}
	return v.first + max(i, 0)
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
	if v.expanded[index] {
		delete(v.expanded, index)
	} else {
		v.expanded[index] = true
	}
	v.touch(index)
}

// Children lists the child sessions of the helper calls in that turn: the
// calls an LLM turn asked for, or those whose results a user turn
// carries.
func (v *View) Children(index int) []string {
	var ids []string
	for _, c := range v.turnCalls(index) {
		if id := c.childID(); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// turnCalls are the calls drawn in (or answered by) a turn, in order.
func (v *View) turnCalls(index int) []*call {
	var out []*call
	add := func(id string) {
		if c := v.calls[id]; c != nil {
			out = append(out, c)
		}
	}
	if v.live != nil && index == int(v.live.turn.GetTurnIndex()) {
		for _, tc := range v.live.turn.GetToolCalls() {
			add(tc.GetId())
		}
		return out
	}
	e := v.entry(index)
	if e == nil {
		return nil
	}
	for _, tc := range e.turn.GetLlm().GetToolCalls() {
		add(tc.GetId())
	}
	for _, r := range e.turn.GetUser().GetToolResults() {
		add(r.GetCallId())
	}
	return out
}

// Turns returns the stored turns loaded, oldest first.
func (v *View) Turns() []*agentsv1.Turn {
	out := make([]*agentsv1.Turn, 0, len(v.turns))
	for _, e := range v.turns {
		if e.turn != nil {
			out = append(out, e.turn)
		}
	}
	return out
}

// FirstIndex is the lowest index of the turns loaded.
func (v *View) FirstIndex() int { return v.first }

// Count is the number of turns of the session, loaded or not.
func (v *View) Count() int { return v.total }

// EndsWithQuestion reports whether the session's newest turn (past any
// compaction) is a user turn the model has not answered and nothing is
// streaming: a fork cut at a question. Without the newest turn loaded it
// cannot tell, and says no.
func (v *View) EndsWithQuestion() bool {
	if v.live != nil || v.first+len(v.turns) != v.total {
		return false
	}
	for i := len(v.turns) - 1; i >= 0; i-- {
		t := v.turns[i].turn
		switch {
		case t == nil:
			return false
		case t.GetCompaction() != nil:
			continue
		}
		return t.GetUser() != nil
	}
	return false
}

// entry is the loaded turn with that index, nil when there is none.
func (v *View) entry(index int) *entry {
	i := index - v.first
	if i < 0 || i >= len(v.turns) || v.turns[i].turn == nil {
		return nil
	}
	return v.turns[i]
}

// ChildOf names the helper session a helper call runs, as its events
// told it; "" when they have not.
func (v *View) ChildOf(callID string) string {
	if c, ok := v.calls[callID]; ok {
		return c.child
	}
	return ""
}

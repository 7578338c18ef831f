// Package conversation is the screen of one session: its header, the
// transcript, the pending calls, the draft and the composer, and every
// control of the session. It is a component of the TUI's one model, not
// a model itself: the shell creates it with New, routes keys to
// HandleKey and what the screen owns (its session's events, snapshots,
// the connection's changes, pastes, the Replies of its commands) to
// Handle, and draws it with Render.
//
// Drafts (seed §5) outlive the screen: they live in a Drafts store the
// shell keeps for the whole run and feeds every event, so a draft is
// posted when its run stops even while its conversation is closed.
package conversation

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/editor"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
	"github.com/agents-os/agents/tui/internal/transcript"
	"google.golang.org/protobuf/proto"
)

// focus says which part of the screen takes the keys.
type focus int

const (
	focusView     focus = iota // the transcript: navigation keys
	focusComposer              // writing a message
	focusDraft                 // editing the draft
	focusPending               // the pending calls panel
	focusAttach                // the attachment path prompt
	focusPicker                // choosing the agent to continue with
	focusExport                // the export path prompt
	focusCompact               // the compaction's instruction prompt
)

// Screen is one session's conversation.
type Screen struct {
	c  Client
	km *keys.Map
	// th is the shell's theme, replaced in place when the terminal's
	// background changes; st are its styles as the screen last took them.
	th     *theme.Theme
	st     theme.ConversationStyles
	drafts *Drafts
	id     string

	meta   *agentsv1.SessionMeta
	agents []*agentsv1.AgentDescriptor
	tr     *transcript.View

	// pos is the event position the transcript reflects: events at or
	// before it are already in what GetSession returned.
	pos position
	// loading is set while the screen (re)loads: events are held
	// meanwhile and applied after the load, those past its position.
	loading bool
	held    []*agentsv1.Event
	// olderLoading is set while a page of older turns is on its way.
	olderLoading bool
	// metaLoading is set while the pending calls are refetched.
	metaLoading bool

	// The viewport over the transcript's lines: offset is the first line
	// shown; follow keeps the bottom in view while text streams in,
	// until the user scrolls up.
	offset, viewHeight, viewWidth int
	follow                        bool

	focus       focus
	composer    composer
	draftEditor textarea.Model
	draftOpen   bool
	draftRev    int // the draft revision the editor holds
	pending     pendingPanel
	attach      *attachPrompt
	picker      *agentPicker
	export      *linePrompt
	compact     *linePrompt
	// creating is set while the first message of an unborn session is
	// on its way: a second one waits for the session to exist. birth
	// tells this unborn screen's answer from another's.
	creating bool
	birth    uint64

	// compacting is the compaction the run is writing a summary for,
	// from its compaction.started until the compaction turn arrives or
	// the run stops.
	compacting *agentsv1.CompactionStarted

	// timeline shows the runs as a waterfall in place of the transcript;
	// helpers are the helper sessions it nests, by id.
	timeline bool
	helpers  map[string]*helperTurns

	// stopBudget is the budget the last run.stopped said was spent
	// (session or owner), which the summary does not keep.
	stopBudget string

	// liveChildren are the child sessions of the helper calls in flight,
	// oldest first: the selected turn links to a child only once the call
	// ends, so until then "open the helper" opens the newest of these.
	liveChildren []string
}

// New returns the screen of the session id. Nothing is fetched until
// Init.
func New(c Client, th *theme.Theme, km *keys.Map, drafts *Drafts, sessionID string) *Screen {
	st := th.Conversation
	s := &Screen{
		c: c, km: km, th: th, st: st, drafts: drafts, id: sessionID,
		tr:          transcript.New(th.Transcript),
		loading:     true,
		follow:      true,
		focus:       focusView,
		composer:    newComposer(st, km),
		draftEditor: newDraftEditor(st, km),
		pending:     newPendingPanel(st),
	}
	s.composer.Set(drafts.takeComposer(sessionID))
	return s
}

// NewUnborn returns the screen of a new session of agent that is not
// stored yet: its first message creates it, so a new session left
// without one leaves nothing behind. The composer has the keys.
func NewUnborn(c Client, th *theme.Theme, km *keys.Map, drafts *Drafts, agent string) *Screen {
	s := New(c, th, km, drafts, "")
	s.birth = births.Add(1)
	s.loading = false
	s.meta = &agentsv1.SessionMeta{Agent: agent, Status: agentsv1.SessionStatus_SESSION_STATUS_READY}
	s.composer.Set(drafts.takeComposer(unbornKey(agent)))
	s.setFocus(focusComposer)
	return s
}

// unbornKey keeps what the composer of a new session of agent held when
// it closed unsent, for the next new session of that agent.
func unbornKey(agent string) string { return "new session with " + agent }

// births numbers the unborn screens.
var births atomic.Uint64

// unborn reports a new session its first message has not created yet.
func (s *Screen) unborn() bool { return s.id == "" }

// Write gives the keys to the composer.
func (s *Screen) Write() tea.Cmd { return s.setFocus(focusComposer) }

// Restyle takes the theme's styles again after the theme changed: the
// text fields hold their own copies, the transcript its drawn lines.
func (s *Screen) Restyle() {
	s.st = s.th.Conversation
	s.composer.ta.SetStyles(s.st.Area)
	s.draftEditor.SetStyles(s.st.Area)
	s.pending.in.SetStyles(s.st.Input)
	if s.attach != nil {
		s.attach.in.SetStyles(s.st.Input)
	}
	s.tr.Restyle(s.th.Transcript)
}

// SessionID is the session the screen shows.
func (s *Screen) SessionID() string { return s.id }

// Focused reports whether a text field or a panel takes the keys, so the
// shell leaves printable keys and tab alone.
func (s *Screen) Focused() bool { return s.focus != focusView }

// Init fetches the session's recent turns and the agents.
func (s *Screen) Init() tea.Cmd {
	if s.unborn() {
		return s.fetchAgents()
	}
	return tea.Batch(s.fetch(fetchAll), s.fetchAgents())
}

// Close keeps what the composer holds for the next time the session
// opens.
func (s *Screen) Close() tea.Cmd {
	key := s.id
	if s.unborn() {
		key = unbornKey(s.meta.GetAgent())
	}
	s.drafts.keepComposer(key, s.composer.Draft())
	s.composer.Blur()
	return nil
}

// status reads the session's status; unspecified until it is loaded.
func (s *Screen) status() agentsv1.SessionStatus { return s.meta.GetStatus() }

// Handle takes what the shell routes to the screen: the events of its
// session (and the session.updated of others, which may share its
// tree's budget), snapshots, the connection's changes, pastes, and the
// replies of the screen's own commands, the editor's return among them.
func (s *Screen) Handle(msg tea.Msg) tea.Cmd {
	defer s.syncDraft()
	switch m := msg.(type) {
	case msgs.Event:
		return s.event(m.Event)
	case msgs.Snapshot:
		// Events may have been missed: load again.
		return s.reload()
	case msgs.Conn:
		if m.State.Connected && s.meta == nil && !s.loading {
			// The first load failed while the server was away: now
			// that it is back, try again.
			return s.reload()
		}
	case tea.PasteMsg:
		return s.paste(m)
	case sessionMsg:
		if m.id == s.id {
			return s.loaded(m)
		}
	case agentsMsg:
		if m.id == s.id {
			if m.err != nil {
				return status("", fmt.Errorf("list agents: %w", client.Describe(m.err)))
			}
			s.agents = m.agents
		}
	case postedMsg:
		if m.id == s.id {
			return s.posted(m)
		}
	case createdMsg:
		if s.unborn() && m.birth == s.birth {
			return s.created(m)
		}
	case exportedMsg:
		if m.id == s.id {
			return s.exported(m)
		}
	case compactedMsg:
		if m.id == s.id {
			return s.compacted(m)
		}
	case controlMsg:
		if m.id == s.id {
			return s.controlled(m)
		}
	case forkedMsg:
		if m.id == s.id {
			return s.forked(m)
		}
	case completedMsg:
		if m.id == s.id {
			return s.completed(m)
		}
	case completionMsg:
		if m.id == s.id && s.attach != nil {
			s.attach.apply(m)
		}
	case attachedMsg:
		if m.id == s.id {
			return s.attached(m)
		}
	case editorReadyMsg:
		if m.id == s.id {
			return s.runEditor(m)
		}
	case editorDoneMsg:
		if m.id == s.id {
			return s.edited(m)
		}
	case timelineTickMsg:
		// While the timeline shows, what runs grows with the clock, not
		// only with the events.
		if m.id == s.id && s.timeline {
			return tea.Batch(timelineTick(s.id), s.fetchHelpers())
		}
	case helperMsg:
		if m.id == s.id {
			s.helperLoaded(m)
		}
	}
	return nil
}

// timelineTickMsg redraws the timeline of session id.
type timelineTickMsg struct{ id string }

// timelineTick asks for a redraw of the timeline in a second.
func timelineTick(id string) tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return timelineTickMsg{id: id} })
}

// reload fetches the session again, holding events until it arrives.
func (s *Screen) reload() tea.Cmd {
	s.loading = true
	return s.fetch(fetchAll)
}

// event applies one event of the subscription.
func (s *Screen) event(ev *agentsv1.Event) tea.Cmd {
	if ev.GetSessionId() != s.id {
		s.treeSpend(ev)
		return nil
	}
	if s.loading {
		s.held = append(s.held, ev)
		return nil
	}
	if !posOf(ev).after(s.pos) {
		return nil // already in what GetSession returned
	}
	s.pos = posOf(ev)
	s.tr.Apply(ev)
	switch b := ev.GetBody().(type) {
	case *agentsv1.Event_CompactionStarted:
		s.compacting = b.CompactionStarted
	case *agentsv1.Event_SessionCompacted:
		s.compacting = nil
	case *agentsv1.Event_SessionUpdated:
		if b.SessionUpdated.GetHeadTurn().GetCompaction() != nil {
			s.compacting = nil
		}
		s.meta = s.keepSpend(b.SessionUpdated.GetMeta())
		if int(s.meta.GetPendingCalls()) != s.pending.Len() && !s.metaLoading {
			// Someone answered a call, or a round deferred new ones
			// the events did not list: ask the server.
			s.metaLoading = true
			return s.fetch(fetchMeta)
		}
	case *agentsv1.Event_MailAccepted:
		// No summary of the session comes with it: ask for one, which
		// counts the mail, so the header says it waits.
		if !s.metaLoading {
			s.metaLoading = true
			return s.fetch(fetchMeta)
		}
	case *agentsv1.Event_RunStarted:
		s.setStatus(agentsv1.SessionStatus_SESSION_STATUS_RUNNING, "")
	case *agentsv1.Event_RunStopped:
		s.setStatus(b.RunStopped.GetStatus(), b.RunStopped.GetReason())
		s.stopBudget = b.RunStopped.GetBudget()
		s.liveChildren = nil
		s.compacting = nil
	case *agentsv1.Event_SessionFailed:
		s.setStatus(agentsv1.SessionStatus_SESSION_STATUS_FAILED, b.SessionFailed.GetReason())
		s.liveChildren = nil
		s.compacting = nil
	case *agentsv1.Event_CallsDeferred:
		s.pending.Add(b.CallsDeferred.GetCalls())
	case *agentsv1.Event_SubcallStarted:
		s.liveChildren = append(s.liveChildren, b.SubcallStarted.GetChildSessionId())
	case *agentsv1.Event_SubcallCompleted:
		s.endChild(b.SubcallCompleted.GetChildSessionId())
	case *agentsv1.Event_SubcallFailed:
		s.endChild(b.SubcallFailed.GetChildSessionId())
	case *agentsv1.Event_SessionDeleted:
		return status("this session was deleted", nil)
	}
	return nil
}

// setStatus records a status an event reported. The summary may be
// shared with the event other screens got, so it is copied, not changed.
func (s *Screen) setStatus(st agentsv1.SessionStatus, reason string) {
	m := &agentsv1.SessionMeta{Id: s.id}
	if s.meta != nil {
		m = proto.CloneOf(s.meta)
	}
	m.Status, m.StatusReason = st, reason
	s.meta = m
}

func (s *Screen) endChild(id string) {
	for i, c := range s.liveChildren {
		if c == id {
			s.liveChildren = append(s.liveChildren[:i:i], s.liveChildren[i+1:]...)
			return
		}
	}
}

// loaded takes a GetSession answer.
func (s *Screen) loaded(m sessionMsg) tea.Cmd {
	switch m.kind {
	case fetchOlder:
		s.olderLoading = false
	case fetchMeta:
		s.metaLoading = false
	}
	if m.err != nil {
		if m.kind == fetchAll {
			s.loading = false
			s.held = nil
		}
		return status("", fmt.Errorf("load session: %w", client.Describe(m.err)))
	}
	sess := m.session
	switch m.kind {
	case fetchOlder:
		s.prepend(sess)
		return nil
	case fetchMeta:
		s.meta = sess.GetMeta()
		s.setPending(sess.GetPendingCalls())
		return s.drafts.Settle(s.id, s.status())
	}
	s.meta = sess.GetMeta()
	if s.status() != agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
		s.compacting = nil // the run stopped while the events were missed
	}
	s.tr.Load(sess)
	s.setPending(sess.GetPendingCalls())
	s.pos = position{seq: sess.GetSeq(), delta: sess.GetDeltaSeq()}
	s.loading = false
	held := s.held
	s.held = nil
	var cmds []tea.Cmd
	for _, ev := range held {
		cmds = append(cmds, s.event(ev))
	}
	// The run may have stopped while nobody watched: a draft waiting for
	// it goes now.
	cmds = append(cmds, s.drafts.Settle(s.id, s.status()))
	return tea.Batch(cmds...)
}

// setPending takes the server's list of pending calls; with none left,
// the keys go back to the composer.
func (s *Screen) setPending(calls []*agentsv1.DeferredCall) {
	s.pending.Set(calls)
	if s.pending.Len() == 0 && s.focus == focusPending {
		s.setFocus(focusComposer)
	}
}

// prepend adds a page of older turns above those loaded, keeping the
// lines on screen where they are.
func (s *Screen) prepend(sess *agentsv1.Session) {
	turns := sess.GetTurns()
	if len(turns) == 0 || int(sess.GetFirstTurnIndex())+len(turns) != s.tr.FirstIndex() {
		return // not the page just before ours (the session was reloaded)
	}
	before := len(s.tr.Lines(s.viewWidth))
	s.tr.Prepend(turns)
	s.offset += len(s.tr.Lines(s.viewWidth)) - before
}

// posted takes the answer to a message sent from the composer.
func (s *Screen) posted(m postedMsg) tea.Cmd {
	if m.err != nil {
		s.composer.Restore(m.sent)
		return status("", fmt.Errorf("send: %w", client.Describe(m.err)))
	}
	if meta := m.resp.GetMeta(); meta != nil && !s.loading {
		s.meta = meta
	}
	if m.resp.GetMailId() != "" {
		return status("sent: it reaches the model at its next step", nil)
	}
	return emit(msgs.Started{ID: s.id})
}

// created takes the answer to the first message of a new session: from
// now on the screen is that session's, loaded as any other.
func (s *Screen) created(m createdMsg) tea.Cmd {
	s.creating = false
	if m.err != nil {
		s.composer.Restore(m.sent)
		return status("", fmt.Errorf("new session with %s: %w", s.meta.GetAgent(), client.Describe(m.err)))
	}
	sess := m.session
	s.id = sess.GetMeta().GetId()
	s.meta = sess.GetMeta()
	s.loading = true
	return tea.Batch(emit(msgs.Created{ID: s.id}), emit(msgs.Started{ID: s.id}), s.fetch(fetchAll))
}

// controlled takes the answer to a run control.
func (s *Screen) controlled(m controlMsg) tea.Cmd {
	if m.err != nil {
		return status("", fmt.Errorf("%s: %w", m.what, client.Describe(m.err)))
	}
	return status(m.done, nil)
}

// forked opens the session a fork made.
func (s *Screen) forked(m forkedMsg) tea.Cmd {
	if m.err != nil {
		return status("", fmt.Errorf("%s: %w", m.what, client.Describe(m.err)))
	}
	id := m.session.GetMeta().GetId()
	what := m.what + ": opened " + id
	if turns := m.session.GetTurns(); len(turns) > 0 && turns[len(turns)-1].GetUser() != nil {
		// Cut at a question, the fork holds it unanswered.
		what += fmt.Sprintf("; %s runs its question", s.keyName(keys.Pause))
	}
	return tea.Batch(emit(msgs.OpenSession{ID: id, Write: true}), status(what, nil))
}

// completed takes the answer to CompleteCall. A call answered elsewhere
// first is an error to show, not to stop for: the list is refetched.
func (s *Screen) completed(m completedMsg) tea.Cmd {
	delete(s.pending.sending, m.token)
	if m.err != nil {
		s.pending.Remove(m.token)
		s.metaLoading = true
		return tea.Batch(status("", fmt.Errorf("answer call: %w", client.Describe(m.err))), s.fetch(fetchMeta))
	}
	s.pending.Remove(m.token)
	if s.pending.Len() == 0 && s.focus == focusPending {
		s.setFocus(focusComposer)
	}
	if n := m.resp.GetRemaining(); n > 0 {
		return status(fmt.Sprintf("%s; %d more to go", m.done, n), nil)
	}
	return status(m.done, nil)
}

// attached takes a file read for the composer.
func (s *Screen) attached(m attachedMsg) tea.Cmd {
	if m.err != nil {
		if s.attach != nil {
			s.attach.err = m.err.Error()
			return nil
		}
		return status("", fmt.Errorf("attach: %w", m.err))
	}
	s.composer.Attach(m.attachment)
	s.attach = nil
	if s.focus == focusAttach {
		s.setFocus(focusComposer)
	}
	return status("attached "+m.attachment.GetName(), nil)
}

// paste puts pasted text where the keys go.
func (s *Screen) paste(m tea.PasteMsg) tea.Cmd {
	switch s.focus {
	case focusView:
		s.setFocus(focusComposer)
		return s.composer.Update(m)
	case focusComposer:
		return s.composer.Update(m)
	case focusDraft:
		cmd := s.editDraft(m)
		return cmd
	case focusPending:
		if s.pending.answering {
			return s.pending.Update(m)
		}
	case focusAttach:
		return s.attach.Update(m)
	case focusExport:
		return s.export.Update(m)
	case focusCompact:
		return s.compact.Update(m)
	}
	return nil
}

// syncDraft reloads the draft editor when the draft changed under it (an
// append, a post, a failed post coming back). A draft emptied so (it was
// sent) closes its panel: nothing is left to edit there.
func (s *Screen) syncDraft() {
	if rev := s.drafts.Revision(s.id); rev != s.draftRev {
		was := s.draftEditor.Value()
		d := s.drafts.Get(s.id)
		s.draftRev = rev
		s.draftEditor.SetValue(d.Text)
		if s.draftOpen && was != "" && d.Empty() {
			s.draftOpen = false
			if s.focus == focusDraft {
				s.setFocus(focusComposer)
			}
		}
	}
}

// editDraft passes msg to the draft editor and keeps the store in step.
func (s *Screen) editDraft(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	s.draftEditor, cmd = s.draftEditor.Update(msg)
	if v := s.draftEditor.Value(); v != s.drafts.Get(s.id).Text {
		s.drafts.SetText(s.id, v)
		s.draftRev = s.drafts.Revision(s.id)
	}
	return cmd
}

// setFocus moves the keys to f.
func (s *Screen) setFocus(f focus) tea.Cmd {
	s.composer.Blur()
	s.draftEditor.Blur()
	s.focus = f
	switch f {
	case focusComposer:
		return s.composer.Focus()
	case focusDraft:
		return s.draftEditor.Focus()
	}
	return nil
}

// Editing in $EDITOR: the text goes to a temporary file, the editor runs
// in the terminal the TUI runs in, and the file's content comes back.

type editorReadyMsg struct {
	id, path string
	draft    bool // editing the draft, not the composer
	err      error
}

type editorDoneMsg struct {
	id    string
	text  string
	draft bool
	err   error
}

func (s *Screen) openEditor() tea.Cmd {
	id, draft := s.id, s.focus == focusDraft
	text := s.composer.ta.Value()
	if draft {
		text = s.draftEditor.Value()
	}
	return func() tea.Msg {
		f, err := os.CreateTemp("", "agents-message-*.md")
		if err != nil {
			return editorReadyMsg{id: id, err: err}
		}
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return editorReadyMsg{id: id, path: f.Name(), draft: draft, err: err}
	}
}

func (s *Screen) runEditor(m editorReadyMsg) tea.Cmd {
	if m.err != nil {
		return status("", fmt.Errorf("editor: %w", m.err))
	}
	return tea.ExecProcess(editor.Cmd(os.Getenv, m.path), func(err error) tea.Msg {
		done := editorDoneMsg{id: m.id, draft: m.draft, err: err}
		if err == nil {
			data, rerr := os.ReadFile(m.path)
			done.text, done.err = strings.TrimRight(string(data), "\n"), rerr
		}
		os.Remove(m.path)
		return done
	})
}

func (s *Screen) edited(m editorDoneMsg) tea.Cmd {
	if m.err != nil {
		return status("", fmt.Errorf("editor: %w", m.err))
	}
	if m.draft {
		s.drafts.SetText(s.id, m.text)
		return nil
	}
	s.composer.ta.SetValue(m.text)
	return nil
}

// position is a place in the event stream: (seq, delta_seq).
type position struct{ seq, delta uint64 }

func posOf(ev *agentsv1.Event) position {
	return position{seq: ev.GetSeq(), delta: ev.GetDeltaSeq()}
}

// tagShift is where a delta_seq's tag begins: the bits above it name the
// server process that numbered the delta, and delta_seqs of two of them
// do not compare.
const tagShift = 33

// after reports whether p comes after q. At one seq, a delta numbered by
// another server than q's (GetSession answered by one, the stream by
// another) cannot be placed: it counts as not after, so a piece of text
// may be missing until the turn is stored, never shown twice.
func (p position) after(q position) bool {
	if p.seq != q.seq {
		return p.seq > q.seq
	}
	if q.delta != 0 && p.delta>>tagShift != q.delta>>tagShift {
		return false
	}
	return p.delta > q.delta
}

package conversation

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/units"
)

func (s *Screen) is(msg tea.KeyPressMsg, a keys.Action) bool {
	return key.Matches(msg, s.km.Get(a))
}

// HandleKey acts on a key and says whether it used it; a key it leaves
// (esc with nothing to close, tab on the transcript) is the shell's.
func (s *Screen) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	defer s.syncDraft()
	if s.is(msg, keys.Quit) || s.isGlobal(msg) {
		return nil, false
	}
	switch s.focus {
	case focusAttach:
		return s.attachKey(msg), true
	case focusPicker:
		return s.pickerKey(msg), true
	case focusExport:
		return s.exportKey(msg), true
	case focusCompact:
		return s.compactKey(msg), true
	}
	if cmd, ok := s.controlKey(msg); ok {
		return cmd, true
	}
	switch s.focus {
	case focusComposer:
		return s.composerKey(msg), true
	case focusDraft:
		return s.draftKey(msg), true
	case focusPending:
		return s.pendingKey(msg), true
	}
	return s.viewKey(msg)
}

// isGlobal reports a key of the shell's that no text field types: the
// shell gets it whatever has the focus here.
func (s *Screen) isGlobal(msg tea.KeyPressMsg) bool {
	for _, a := range []keys.Action{keys.NewSession, keys.OpenByID, keys.Help, keys.Reload} {
		if s.is(msg, a) {
			return true
		}
	}
	return false
}

// controlKey handles the keys that work wherever the focus is: the
// session's controls and scrolling. None is one of the editing keys the
// text fields keep (ctrl+a/e/k/u/w); the rest of the session's commands
// are the transcript's letters.
func (s *Screen) controlKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case s.is(msg, keys.PageUp):
		return s.scroll(-max(s.viewHeight-1, 1)), true
	case s.is(msg, keys.PageDown):
		return s.scroll(max(s.viewHeight-1, 1)), true
	}
	if s.unborn() {
		for _, a := range []keys.Action{keys.Interrupt, keys.CancelRun, keys.Pause, keys.Fork, keys.Pending, keys.Draft, keys.ToggleDraft, keys.SendNow} {
			if s.is(msg, a) {
				return status("the session starts with its first message", nil), true
			}
		}
		return nil, false
	}
	switch {
	case s.is(msg, keys.Interrupt):
		return s.interrupt(), true
	case s.is(msg, keys.CancelRun):
		return s.cancelRun("cancel the run", "run cancelled"), true
	case s.is(msg, keys.Pause):
		return s.pauseOrResume(), true
	case s.is(msg, keys.Fork):
		return s.forkAtSelection(), true
	case s.is(msg, keys.Pending):
		return s.togglePending(), true
	case s.is(msg, keys.Draft), s.is(msg, keys.ToggleDraft):
		return s.toggleDraft(), true
	case s.is(msg, keys.SendNow):
		if s.drafts.Get(s.id).Empty() {
			return status("the draft is empty", nil), true
		}
		return s.drafts.Send(s.id), true
	}
	return nil, false
}

func (s *Screen) composerKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case s.is(msg, keys.Send):
		return s.send()
	case s.is(msg, keys.Editor):
		return s.openEditor()
	case s.is(msg, keys.Attach):
		s.attach = newAttachPrompt(s.st)
		return s.setFocus(focusAttach)
	case s.is(msg, keys.Back):
		return s.setFocus(focusView)
	case msg.Code == tea.KeyBackspace && s.composer.Empty() && s.composer.DropLastAttachment():
		return nil
	}
	return s.composer.Update(msg)
}

func (s *Screen) draftKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case s.is(msg, keys.Editor):
		return s.openEditor()
	case s.is(msg, keys.Back):
		s.draftOpen = false
		return s.setFocus(focusComposer)
	}
	return s.editDraft(msg)
}

func (s *Screen) pendingKey(msg tea.KeyPressMsg) tea.Cmd {
	p := &s.pending
	if p.answering && p.rejecting {
		switch {
		case s.is(msg, keys.Answer):
			return s.decide(false, false, p.in.Value())
		case s.is(msg, keys.Back):
			p.StopAnswer()
			return nil
		}
		return p.Update(msg)
	}
	if p.answering {
		switch {
		case s.is(msg, keys.Answer):
			return s.answer(p.in.Value(), false)
		case s.is(msg, keys.Fail):
			return s.answer(p.in.Value(), true)
		case s.is(msg, keys.Back):
			p.StopAnswer()
			return nil
		}
		return p.Update(msg)
	}
	if isApproval(p.Selected()) {
		// A call that waits for approval takes a decision, not text.
		switch {
		case s.is(msg, keys.Approve), s.is(msg, keys.Answer):
			return s.decide(true, false, "")
		case s.is(msg, keys.AlwaysAllow):
			return s.decide(true, true, "")
		case s.is(msg, keys.Reject):
			return p.StartReject()
		case s.is(msg, keys.Fail):
			return s.decide(false, false, "")
		}
	}
	switch {
	case s.is(msg, keys.Up):
		p.Move(-1)
	case s.is(msg, keys.Down):
		p.Move(1)
	case isApproval(p.Selected()):
		// Other keys do not start a text answer of an approval.
	case s.is(msg, keys.Answer):
		if p.Selected() != nil {
			return p.StartAnswer()
		}
	case s.is(msg, keys.Fail):
		return s.answer("", true)
	case s.is(msg, keys.Back):
		return s.setFocus(focusComposer)
	case msg.Text != "" && p.Selected() != nil:
		// Typing starts the answer of the selected call.
		return tea.Batch(p.StartAnswer(), p.Update(msg))
	}
	return nil
}

func (s *Screen) viewKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case s.is(msg, keys.Focus):
		return s.setFocus(focusComposer), true
	case s.is(msg, keys.Up):
		return s.scroll(-1), true
	case s.is(msg, keys.Down):
		return s.scroll(1), true
	case s.is(msg, keys.PrevTurn):
		return s.selectTurn(-1), true
	case s.is(msg, keys.NextTurn):
		return s.selectTurn(1), true
	case s.is(msg, keys.Expand):
		if sel := s.tr.Selected(); sel >= 0 {
			s.tr.Toggle(sel)
		}
		return nil, true
	case s.is(msg, keys.OpenChild):
		return s.openChild(), true
	case s.is(msg, keys.CopyTurn):
		return s.copyTurn(), true
	case s.is(msg, keys.ContinueWith):
		return s.openPicker(), true
	case s.is(msg, keys.Export):
		return s.openExport(), true
	case s.is(msg, keys.Compact):
		return s.openCompact(), true
	case s.is(msg, keys.Timeline):
		s.timeline = !s.timeline
		if s.timeline {
			return tea.Batch(timelineTick(s.id), s.fetchHelpers()), true
		}
		return nil, true
	case s.is(msg, keys.Back) && s.timeline:
		s.timeline = false
		return nil, true
	case s.is(msg, keys.HardCancel):
		if s.unborn() {
			return status("the session starts with its first message", nil), true
		}
		return s.cancelAttached(), true
	case s.is(msg, keys.Back) && s.tr.Selected() >= 0:
		s.tr.Select(-1)
		s.follow = true
		return nil, true
	}
	return nil, false
}

func (s *Screen) attachKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case msg.Code == tea.KeyTab:
		return complete(s.id, s.attach.in.Value())
	case s.is(msg, keys.Back):
		s.attach = nil
		return s.setFocus(focusComposer)
	case msg.Code == tea.KeyEnter:
		if path := s.attach.in.Value(); path != "" {
			return readAttachment(s.id, path)
		}
		return nil
	}
	s.attach.err, s.attach.candidates = "", nil
	return s.attach.Update(msg)
}

func (s *Screen) pickerKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case s.is(msg, keys.Up):
		s.picker.Move(-1)
	case s.is(msg, keys.Down):
		s.picker.Move(1)
	case s.is(msg, keys.Back):
		// Back where c opened it, as export and compact go.
		s.picker = nil
		return s.setFocus(focusView)
	case msg.Code == tea.KeyEnter:
		a := s.picker.Selected()
		s.picker = nil
		cmd := s.setFocus(focusComposer)
		if a == nil {
			return cmd
		}
		if s.unborn() {
			// Nothing to continue yet: the first message goes to a.
			s.meta.Agent = a.GetSlug()
			return tea.Batch(cmd, status("the new session is with "+a.GetSlug(), nil))
		}
		return tea.Batch(cmd, s.fork(&agentsv1.ForkSessionRequest{SessionId: s.id, Agent: a.GetSlug()}, "continued with "+a.GetSlug()))
	}
	return nil
}

// send posts the composer's message when the session accepts input;
// while a run is busy (running, waiting for calls, paused) it becomes a
// paragraph of the draft instead, posted whole when the user's turn
// comes.
func (s *Screen) send() tea.Cmd {
	d := s.composer.Draft()
	if d.Empty() {
		return nil
	}
	if s.meta == nil {
		return status("the session is still loading", nil)
	}
	if s.unborn() {
		if s.creating {
			return status("the session is being created: send again once it is", nil)
		}
		s.creating = true
		s.composer.Reset()
		return s.create(d)
	}
	s.composer.Reset()
	s.follow = true
	if !acceptsInput(s.status()) {
		s.drafts.Append(s.id, d.Text, d.Attachments)
		return status("added to the draft: it is sent when the run stops (ctrl+s sends it now)", nil)
	}
	return s.post(d, false)
}

// interrupt cuts the step in flight short. With text in the composer it
// continues with that message, bypassing the draft; with none it stops
// the run, which is the user's turn: the draft, if any, is posted then.
func (s *Screen) interrupt() tea.Cmd {
	d := s.composer.Draft()
	if d.Empty() {
		if acceptsInput(s.status()) {
			return status("nothing to interrupt", nil)
		}
		return s.cancelRun("interrupt", "interrupted")
	}
	s.composer.Reset()
	s.follow = true
	return s.post(d, true)
}

// pauseOrResume pauses a running session and resumes a paused one (or a
// failed one: Resume retries its run). Paused is the server's status.
func (s *Screen) pauseOrResume() tea.Cmd {
	switch s.status() {
	case agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
		return s.pause()
	case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
		if n := s.pending.Len(); n > 0 {
			// The run goes on once they are answered; the server refuses
			// to resume it before.
			return status(fmt.Sprintf("the run waits for %s: %s answers them", units.Count(n, "pending call", "pending calls"), s.keyName(keys.Pending)), nil)
		}
		return s.resume()
	case agentsv1.SessionStatus_SESSION_STATUS_PAUSED, agentsv1.SessionStatus_SESSION_STATUS_FAILED:
		return s.resume()
	case agentsv1.SessionStatus_SESSION_STATUS_READY:
		if s.meta.GetStatusReason() == reasonBudget {
			// Its budget stopped the run; once raised, Resume goes on.
			return s.resume()
		}
		if s.tr.EndsWithQuestion() {
			// A fork cut at a question: Resume runs it.
			return s.resume()
		}
	}
	return status("no run to pause or resume", nil)
}

// forkAtSelection forks at the selected turn, or at the head when none
// is selected.
func (s *Screen) forkAtSelection() tea.Cmd {
	req := &agentsv1.ForkSessionRequest{SessionId: s.id}
	what := "forked at the head"
	if sel := s.tr.Selected(); sel >= 0 {
		// at_turn counts from the newest turn, 0 being the head.
		at := int32(s.tr.Count() - 1 - sel)
		req.AtTurn = &at
		what = fmt.Sprintf("forked at turn %d", sel+1)
	}
	return s.fork(req, what)
}

func (s *Screen) openPicker() tea.Cmd {
	if len(s.agents) == 0 {
		return status("no agents to continue with", nil)
	}
	if s.meta == nil {
		return status("the session is still loading", nil)
	}
	s.picker = newAgentPicker(s.agents, s.meta.GetAgent())
	return s.setFocus(focusPicker)
}

func (s *Screen) togglePending() tea.Cmd {
	if s.focus == focusPending {
		s.pending.StopAnswer()
		return s.setFocus(focusComposer)
	}
	if s.pending.Len() == 0 {
		return status("no pending calls", nil)
	}
	return s.setFocus(focusPending)
}

// toggleDraft expands the draft into its editor, or collapses it.
func (s *Screen) toggleDraft() tea.Cmd {
	if s.draftOpen {
		s.draftOpen = false
		if s.focus == focusDraft {
			return s.setFocus(focusComposer)
		}
		return nil
	}
	s.draftOpen = true
	s.draftRev = -1 // load the editor from the store
	s.syncDraft()
	s.draftEditor.CursorEnd()
	return s.setFocus(focusDraft)
}

// answer completes the selected call with text, or fails it with text
// as the reason. The run resumes with the last call of the round.
func (s *Screen) answer(text string, fail bool) tea.Cmd {
	c := s.pending.Selected()
	if c == nil || s.pending.sending[c.GetToken()] {
		return nil
	}
	req := &agentsv1.CompleteCallRequest{Token: c.GetToken(), Resume: s.pending.Len()-len(s.pending.sending) == 1}
	done := "call answered"
	if fail {
		if text == "" {
			text = "the user declined this call"
		}
		req.Result = &agentsv1.CompleteCallRequest_Error{Error: text}
		done = "call failed"
	} else {
		req.Result = &agentsv1.CompleteCallRequest_Text{Text: text}
	}
	s.pending.sending[c.GetToken()] = true
	s.pending.StopAnswer()
	return s.complete(req, done)
}

// decide answers the selected call that waits for approval: approved (and
// with always, its tool allowed for the rest of the session), or rejected
// with reason. The server goes on with the run once the round is
// complete.
func (s *Screen) decide(approve, always bool, reason string) tea.Cmd {
	c := s.pending.Selected()
	if c == nil || s.pending.sending[c.GetToken()] {
		return nil
	}
	req := &agentsv1.CompleteCallRequest{Token: c.GetToken(), Result: &agentsv1.CompleteCallRequest_Approval{
		Approval: &agentsv1.Approval{Approve: approve, Always: always, Reason: reason},
	}}
	done := "call rejected"
	switch {
	case approve && always:
		done = fmt.Sprintf("call approved, and %s's later calls in this session", c.GetCall().GetName())
	case approve:
		done = "call approved"
	}
	s.pending.sending[c.GetToken()] = true
	s.pending.StopAnswer()
	return s.complete(req, done)
}

// scroll moves the viewport by delta lines. Reaching the top fetches the
// page of turns before it; reaching the bottom follows the stream again.
func (s *Screen) scroll(delta int) tea.Cmd {
	total := len(s.tr.Lines(s.viewWidth))
	bottom := max(total-s.viewHeight, 0)
	if s.follow {
		s.offset = bottom
	}
	s.offset = min(max(s.offset+delta, 0), bottom)
	s.follow = s.offset == bottom
	if s.offset == 0 && delta < 0 {
		return s.loadOlder()
	}
	return nil
}

// loadOlder fetches the page of turns before the oldest loaded.
func (s *Screen) loadOlder() tea.Cmd {
	if s.olderLoading || s.loading || s.tr.FirstIndex() == 0 {
		return nil
	}
	s.olderLoading = true
	return s.fetch(fetchOlder)
}

// selectTurn moves the selection by delta turns and brings it into view.
// Past the newest turn the selection goes and the view follows again.
func (s *Screen) selectTurn(delta int) tea.Cmd {
	n := s.tr.Count()
	if n == 0 {
		return nil
	}
	sel := s.tr.Selected()
	if sel < 0 {
		sel = n
	}
	sel += delta
	var cmd tea.Cmd
	switch {
	case sel >= n:
		s.tr.Select(-1)
		s.follow = true
		return nil
	case sel < s.tr.FirstIndex():
		sel = s.tr.FirstIndex()
		cmd = s.loadOlder()
	}
	s.tr.Select(sel)
	s.follow = false
	if start := s.tr.TurnStart(sel); start >= 0 && (start < s.offset || start >= s.offset+s.viewHeight) {
		s.offset = start
	}
	return cmd
}

// openChild opens the helper session of the selected turn, or, with
// none, that of the newest helper call in flight.
func (s *Screen) openChild() tea.Cmd {
	if sel := s.tr.Selected(); sel >= 0 {
		if ids := s.tr.Children(sel); len(ids) > 0 {
			return emit(msgs.OpenSession{ID: ids[0]})
		}
	}
	if n := len(s.liveChildren); n > 0 {
		return emit(msgs.OpenSession{ID: s.liveChildren[n-1]})
	}
	if s.tr.Selected() < 0 {
		// Nothing selected: the newest helper call of the conversation.
		for i := s.tr.Count() - 1; i >= s.tr.FirstIndex(); i-- {
			if ids := s.tr.Children(i); len(ids) > 0 {
				return emit(msgs.OpenSession{ID: ids[len(ids)-1]})
			}
		}
	}
	return status("no helper session here: select a turn with a helper call", nil)
}

// copyTurn copies the selected turn (or the newest) as markdown, through
// the terminal (OSC 52), so it works over ssh too.
func (s *Screen) copyTurn() tea.Cmd {
	sel := s.tr.Selected()
	if sel < 0 {
		sel = s.tr.Count() - 1
	}
	text := s.tr.Markdown(sel)
	if text == "" {
		return status("nothing to copy in this turn", nil)
	}
	return tea.Batch(tea.SetClipboard(text), status(fmt.Sprintf("copied turn %d", sel+1), nil))
}

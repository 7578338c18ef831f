package conversation

import (
	"charm.land/bubbles/v2/key"

	"github.com/agents-os/agents/tui/internal/keys"
)

// Keys are the keys of what has the focus now, the most used first, for
// the footer: the keymap's keys with a short word for each.
func (s *Screen) Keys() []key.Binding {
	h := func(a keys.Action, desc string) key.Binding { return keys.Hint(s.km, desc, a) }
	controls := func() []key.Binding {
		if s.unborn() {
			return nil
		}
		return []key.Binding{h(keys.Interrupt, "interrupt"), h(keys.CancelRun, "cancel run"), h(keys.Pause, "pause/resume"),
			h(keys.Pending, "pending calls"), h(keys.Draft, "draft")}
	}
	switch s.focus {
	case focusComposer:
		send := "send"
		if s.meta != nil && !acceptsInput(s.status()) {
			send = "add to the draft"
		}
		out := []key.Binding{h(keys.Send, send), h(keys.Newline, "new line"), h(keys.Back, "transcript"),
			h(keys.Attach, "attach"), h(keys.Editor, "$EDITOR")}
		return append(out, controls()...)
	case focusDraft:
		return []key.Binding{h(keys.SendNow, "send now"), h(keys.Editor, "$EDITOR"), h(keys.Back, "close the draft")}
	case focusPending:
		p := &s.pending
		move := keys.Hint(s.km, "move", keys.Up, keys.Down)
		switch {
		case p.answering && p.rejecting:
			return []key.Binding{h(keys.Answer, "reject"), h(keys.Back, "stop answering")}
		case p.answering:
			return []key.Binding{h(keys.Answer, "send"), h(keys.Fail, "fail the call"), h(keys.Back, "stop answering")}
		case isApproval(p.Selected()):
			return []key.Binding{h(keys.Approve, "approve"), h(keys.AlwaysAllow, "always allow"), h(keys.Reject, "reject"),
				h(keys.Fail, "reject, no reason"), move, h(keys.Back, "close")}
		}
		return []key.Binding{h(keys.Answer, "answer"), h(keys.Fail, "fail the call"), move, h(keys.Back, "close")}
	case focusAttach:
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "attach")),
			key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "complete")), h(keys.Back, "cancel")}
	case focusExport:
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "write the file")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}
	case focusCompact:
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "compact")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}
	case focusPicker:
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "continue with it")),
			keys.Hint(s.km, "move", keys.Up, keys.Down), h(keys.Back, "cancel")}
	}
	out := []key.Binding{h(keys.Focus, "write"), keys.Hint(s.km, "turns", keys.PrevTurn, keys.NextTurn),
		h(keys.Expand, "details"), h(keys.Export, "export"), h(keys.ContinueWith, "continue with…"),
		h(keys.OpenChild, "helper"), h(keys.CopyTurn, "copy"), h(keys.Fork, "fork")}
	if !s.unborn() {
		out = append(out, h(keys.Compact, "compact"), h(keys.HardCancel, "hard cancel"))
	}
	out = append(out, controls()...)
	return append(out, h(keys.Back, "back"))
}

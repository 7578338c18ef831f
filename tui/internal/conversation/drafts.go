package conversation

import (
	"context"
	"strings"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/msgs"
)

// Draft is what a user wrote to a conversation while its run was busy:
// one message being elaborated (seed §5), not a queue of messages. The
// server never sees it until it is posted whole.
type Draft struct {
	Text        string
	Attachments []*agentsv1.Attachment
}

// Empty reports whether there is nothing to post.
func (d Draft) Empty() bool { return strings.TrimSpace(d.Text) == "" && len(d.Attachments) == 0 }

// appended is d with text added as a new paragraph and atts after its own.
func (d Draft) appended(text string, atts []*agentsv1.Attachment) Draft {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
	case strings.TrimSpace(d.Text) == "":
		d.Text = text
	default:
		d.Text = strings.TrimRight(d.Text, "\n") + "\n\n" + text
	}
	d.Attachments = append(append([]*agentsv1.Attachment(nil), d.Attachments...), atts...)
	return d
}

// Drafts keeps every conversation's draft, and what its composer held,
// for as long as the TUI runs, so leaving a conversation loses neither.
// It also posts a draft when its session's run stops in a status that
// accepts input, whether the conversation is on screen or not: the shell
// creates one Drafts, hands it to every conversation.New, and passes
// every event of a session, and the DraftSent of its posts, to Handle.
type Drafts struct {
	c       Poster
	drafts  map[string]Draft
	revs    map[string]int // bumped on every change, so an open editor reloads
	compose map[string]Draft
}

// NewDrafts returns an empty store that posts through c.
func NewDrafts(c Poster) *Drafts {
	return &Drafts{c: c, drafts: map[string]Draft{}, revs: map[string]int{}, compose: map[string]Draft{}}
}

// Get is the session's draft.
func (d *Drafts) Get(id string) Draft { return d.drafts[id] }

// Revision changes whenever the session's draft does.
func (d *Drafts) Revision(id string) int { return d.revs[id] }

// Append adds a paragraph (and attachments) to the session's draft.
func (d *Drafts) Append(id, text string, atts []*agentsv1.Attachment) {
	d.set(id, d.drafts[id].appended(text, atts))
}

// SetText replaces the draft's text, as its editor does; attachments stay.
func (d *Drafts) SetText(id, text string) {
	dr := d.drafts[id]
	dr.Text = text
	d.set(id, dr)
}

// Clear drops the session's draft.
func (d *Drafts) Clear(id string) { d.set(id, Draft{}) }

func (d *Drafts) set(id string, dr Draft) {
	if dr.Empty() {
		delete(d.drafts, id)
	} else {
		d.drafts[id] = dr
	}
	d.revs[id]++
}

// Send posts the session's draft now, if there is one. During a run the
// server delivers it as mail folded at the next step.
func (d *Drafts) Send(id string) tea.Cmd {
	dr := d.drafts[id]
	if dr.Empty() {
		return nil
	}
	d.Clear(id)
	return d.post(id, dr)
}

// Settle posts the draft when status accepts input: the run it waited
// for is over, so it is the user's turn.
func (d *Drafts) Settle(id string, status agentsv1.SessionStatus) tea.Cmd {
	if !acceptsInput(status) {
		return nil
	}
	return d.Send(id)
}

// DraftSent is the outcome of posting a draft, for the Drafts that
// posted it.
type DraftSent struct {
	id    string
	draft Draft
	resp  *agentsv1.PostMessageResponse
	err   error
}

func (d *Drafts) post(id string, dr Draft) tea.Cmd {
	c := d.c
	req := &agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: dr.Text, Attachments: dr.Attachments}}
	return func() tea.Msg {
		resp, err := call(func(ctx context.Context) (*connect.Response[agentsv1.PostMessageResponse], error) {
			return c.PostMessage(ctx, connect.NewRequest(req))
		})
		m := DraftSent{id: id, draft: dr, err: err}
		if err == nil {
			m.resp = resp.Msg
		}
		return m
	}
}

// Handle posts drafts whose session now accepts input, and takes the
// results of those posts.
func (d *Drafts) Handle(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case msgs.Event:
		ev := m.Event
		if _, ok := ev.GetBody().(*agentsv1.Event_SessionDeleted); ok {
			delete(d.drafts, ev.GetSessionId())
			delete(d.compose, ev.GetSessionId())
			return nil
		}
		if st, ok := statusOf(ev); ok {
			return d.Settle(ev.GetSessionId(), st)
		}
	case DraftSent:
		if m.err != nil {
			// Nothing typed is lost: the draft comes back, ahead of
			// whatever was added since.
			cur := d.drafts[m.id]
			d.set(m.id, m.draft.appended(cur.Text, cur.Attachments))
			return status("", client.Describe(m.err))
		}
		if m.resp.GetMailId() != "" {
			// Stored as mail: the run goes on and reads it.
			return status("draft sent: it reaches the model at its next step", nil)
		}
		return tea.Batch(emit(msgs.Started{ID: m.id}), status("draft sent", nil))
	}
	return nil
}

// keepComposer remembers what a closing conversation's composer held.
func (d *Drafts) keepComposer(id string, dr Draft) {
	if dr.Empty() {
		delete(d.compose, id)
		return
	}
	d.compose[id] = dr
}

// takeComposer hands back what keepComposer kept.
func (d *Drafts) takeComposer(id string) Draft {
	dr := d.compose[id]
	delete(d.compose, id)
	return dr
}

// acceptsInput reports whether a message posted now starts a run (DESIGN
// §4): ready and failed do; running, waiting and paused turn it into mail.
func acceptsInput(st agentsv1.SessionStatus) bool {
	return st == agentsv1.SessionStatus_SESSION_STATUS_READY || st == agentsv1.SessionStatus_SESSION_STATUS_FAILED
}

// statusOf is the session status an event reports, if it reports one.
func statusOf(ev *agentsv1.Event) (agentsv1.SessionStatus, bool) {
	switch b := ev.GetBody().(type) {
	case *agentsv1.Event_RunStopped:
		return b.RunStopped.GetStatus(), true
	case *agentsv1.Event_SessionFailed:
		return agentsv1.SessionStatus_SESSION_STATUS_FAILED, true
	case *agentsv1.Event_RunStarted:
		return agentsv1.SessionStatus_SESSION_STATUS_RUNNING, true
	case *agentsv1.Event_SessionUpdated:
		return b.SessionUpdated.GetMeta().GetStatus(), true
	}
	return 0, false
}

package runner

import (
	"context"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Mail is a piece of mail to send.
type Mail struct {
	Body     session.MailBody
	Priority session.Priority
	// FromSession sends on behalf of a session of the same owner; empty
	// sends as the owner.
	FromSession string
}

// SendMail stores mail for a session and acts on it: text mail wakes an
// idle session (or waits for the next step of a running one; urgent mail
// cuts the step short), control mail is carried out at once. The mail is
// stored before SendMail returns and is delivered exactly once.
func (r *Runner) SendMail(ctx context.Context, owner, to string, m Mail) (session.Mail, error) {
	sender := session.Sender{Kind: session.SenderUser, Name: owner}
	if m.FromSession != "" {
		from, err := r.store.GetMeta(ctx, m.FromSession)
		if err != nil || (owner != AnyOwner && from.Owner != owner) {
			return session.Mail{}, errs.NotFound("unknown_session", "unknown sending session %s", m.FromSession)
		}
		sender = session.Sender{Kind: session.SenderSession, Name: from.ID}
		if m.Body.Kind == session.MailAgentMessage && m.Body.Agent == "" {
			m.Body.Agent = from.Agent
		}
	}
	mail, err := r.deliver(ctx, owner, to, session.Mail{Sender: sender, Priority: m.Priority, Body: m.Body})
	if err != nil && m.FromSession != "" {
		r.rejected(m.FromSession, owner, err)
	}
	return mail, err
}

// rejected tells a sending session its mail could not be delivered.
func (r *Runner) rejected(from, owner string, cause error) {
	code := errs.CodeOf(cause)
	r.emitFor(from, owner, &agentsv1.Event{Kind: "mail.rejected", Body: &agentsv1.Event_MailRejected{MailRejected: &agentsv1.MailRejected{
		Code: code, Reason: publicText(cause),
	}}})
}

// deliver stores mail in a session's mailbox and acts on it.
func (r *Runner) deliver(ctx context.Context, owner, to string, m session.Mail) (session.Mail, error) {
	if err := checkMail(m.Body); err != nil {
		return session.Mail{}, err
	}
	var out session.Mail
	err := r.withSession(ctx, to, func(a *actor) error {
		if err := a.authorize(owner); err != nil {
			return err
		}
		stored, err := a.addMail(ctx, m)
		if err != nil {
			return err
		}
		out = stored
		if m.Body.Kind.IsControl() {
			return a.obey(ctx, stored)
		}
		if a.run == nil && a.st.meta.Status.AcceptsInput() {
			return a.wake(agentsv1.RunTrigger_RUN_TRIGGER_MAIL)
		}
		return nil
	})
	return out, err
}

// obey carries out control mail and marks it delivered: controls are
// acted on, never folded into a turn.
func (a *actor) obey(ctx context.Context, m session.Mail) error {
	a.st.mail = a.st.mail[:len(a.st.mail)-1] // addMail queued it last
	a.st.meta.PendingMail--
	if _, err := a.r.store.MarkDelivered(ctx, []string{m.ID}, a.r.now()); err != nil {
		return err
	}
	switch m.Body.Kind {
	case session.MailStopRun:
		return a.cancelRun(m.Body.Reason)
	case session.MailCancelCalls:
		a.cancelAttached()
		return nil
	case session.MailResume:
		return a.resumeRun(ctx)
	}
	return nil
}

// wake starts a run on an idle session because mail arrived; the first
// step folds the mail into a user turn.
func (a *actor) wake(trigger agentsv1.RunTrigger) error {
	if missing := a.missingParams(); len(missing) > 0 {
		return nil // the mail waits until a client supplies the params
	}
	return a.startRun(trigger, 0)
}

// ListMail lists a session's mail, newest first.
func (r *Runner) ListMail(ctx context.Context, owner, id string, pendingOnly bool) ([]session.Mail, error) {
	if _, err := r.control(ctx, owner, id, func(*actor) error { return nil }); err != nil {
		return nil, err
	}
	return r.store.ListMail(ctx, id, pendingOnly)
}

func checkMail(b session.MailBody) error {
	switch b.Kind {
	case session.MailUserMessage, session.MailAgentMessage:
		if b.Text == "" {
			return errs.Invalid("invalid_argument", "mail text is empty")
		}
	case session.MailStopRun, session.MailCancelCalls, session.MailResume:
	default:
		return errs.Invalid("invalid_argument", "unknown mail kind %q", b.Kind)
	}
	return nil
}

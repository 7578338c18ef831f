package runner

import (
	"context"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
)

// Mail is a piece of mail to send.
type Mail struct {
	Body     session.MailBody
	Priority session.Priority
	// FromSession sends on behalf of a session of the same owner; empty
	// sends as the owner.
	FromSession string
	// IdempotencyKey makes a retry return the first mail instead of
	// sending it again.
	IdempotencyKey string
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
			return session.Mail{}, errs.NotFound(errs.CodeUnknownSession, "unknown sending session %s", m.FromSession)
		}
		sender = session.Sender{Kind: session.SenderSession, Name: from.ID}
		if m.Body.Kind == session.MailAgentMessage && m.Body.Agent == "" {
			m.Body.Agent = from.Agent
		}
	}
	mail, err := r.deliver(ctx, owner, to, session.Mail{Sender: sender, Priority: m.Priority, Body: m.Body}, m.IdempotencyKey)
	if err != nil && m.FromSession != "" {
		r.rejected(m.FromSession, owner, err)
	}
	return mail, err
}

// rejected tells a sending session its mail could not be delivered.
func (r *Runner) rejected(from, owner string, cause error) {
	code := errs.CodeOf(cause)
	err := r.announce(r.ctx, events.WithKind(&agentsv1.Event{SessionId: from, Owner: owner, Body: &agentsv1.Event_MailRejected{MailRejected: &agentsv1.MailRejected{
		Code: code, Reason: publicText(cause),
	}}}))
	if err != nil {
		r.log.Error("announce rejected mail", "session", from, "err", err)
	}
}

// deliver stores mail in a session's mailbox and acts on it.
func (r *Runner) deliver(ctx context.Context, owner, to string, m session.Mail, key string) (session.Mail, error) {
	if err := checkMail(m.Body); err != nil {
		return session.Mail{}, err
	}
	if m.Priority == "" {
		m.Priority = session.PriorityNormal
	}
	out, _, err := onHolder(ctx, r, owner, to, mailCommand{Mail: m, Key: key})
	return out, err
}

// mailCommand is SendMail on the session's holder.
type mailCommand struct {
	Mail session.Mail `json:"mail"`
	Key  string       `json:"key,omitempty"`
}

func (mailCommand) name() string { return "send_mail" }

func (b mailCommand) apply(ctx context.Context, r *Runner, at target) (session.Mail, error) {
	if at.forwarded() && b.Key == "" {
		b.Key = at.commandKey()
	}
	return r.deliverLocal(ctx, at.owner, at.session, b.Mail, b.Key)
}

// deliverLocal delivers on this server (see deliver).
func (r *Runner) deliverLocal(ctx context.Context, owner, to string, m session.Mail, key string) (session.Mail, error) {
	var out session.Mail
	idem := keyFor(key, opMail, struct {
		To       string
		Sender   session.Sender
		Priority session.Priority
		Body     session.MailBody
	}{to, m.Sender, m.Priority, m.Body})
	err := r.withSession(ctx, to, func(a *actor) error {
		if err := a.authorize(owner); err != nil {
			return err
		}
		if done, err := r.replayed(ctx, a.owner, idem); err != nil || done != nil {
			if err == nil && done.SessionID != a.id {
				err = errKeyReused
			}
			if err == nil {
				out, err = r.mailByID(ctx, done.SessionID, done.MailID)
			}
			return err
		}
		if m.Body.Kind.IsControl() {
			// Controls are acted on, never folded into a turn: they are
			// stored delivered.
			now := a.r.now()
			m.Delivered = &now
		}
		stored, err := a.addMail(ctx, m, idem, nil)
		if err != nil {
			return err
		}
		out = stored
		if m.Body.Kind.IsControl() {
			return a.obey(stored)
		}
		if a.run == nil && a.st.meta.Status.AcceptsInput() {
			err := a.wake(agentsv1.RunTrigger_RUN_TRIGGER_MAIL)
			if c := committer.Classify(err); c == committer.Closing || c == committer.Lost {
				// The mail is stored: the next start, or the server that
				// runs the session now, wakes the session for it (see
				// Recover and placement/leased), so the sender is told the
				// truth, that it was accepted.
				return nil
			}
			return err
		}
		return nil
	})
	return out, err
}

// mailByID reads one mail of a session.
func (r *Runner) mailByID(ctx context.Context, sessionID, id string) (session.Mail, error) {
	list, err := r.store.ListMail(ctx, sessionID, false)
	if err != nil {
		return session.Mail{}, err
	}
	for _, m := range list {
		if m.ID == id {
			return m, nil
		}
	}
	return session.Mail{}, errs.NotFound(errs.CodeUnknownMail, "mail %s is gone", id)
}

// obey carries out control mail, which addMail stored delivered.
func (a *actor) obey(m session.Mail) error {
	a.st.mail = a.st.mail[:len(a.st.mail)-1] // addMail queued it last
	a.st.meta.PendingMail--
	switch m.Body.Kind {
	case session.MailStopRun:
		return a.cancelRun(m.Body.Reason)
	case session.MailCancelCalls:
		a.cancelAttached()
		return nil
	case session.MailResume:
		return a.resumeRun()
	}
	return nil
}

// wake starts a run on an idle session because mail arrived; the first
// step folds the mail into a user turn.
func (a *actor) wake(trigger agentsv1.RunTrigger) error {
	if missing := a.missingParams(); len(missing) > 0 {
		return nil // the mail waits until a client supplies the params
	}
	err := a.startRun(a.edit(), trigger, 0)
	if errs.KindOf(err) == errs.KindResourceExhausted {
		// No run slot: the mail is stored, and the session wakes when a
		// run elsewhere ends.
		a.r.slots.queue(a.id)
		return nil
	}
	return err
}

// wakeQueued wakes a session that waited for a run slot. A session that
// no longer needs one, or could not start its run, passes the slot on to
// the next in the queue; one that finds no slot free after all is queued
// again by wake.
func (r *Runner) wakeQueued(id string) {
	needs := false
	err := r.withSession(r.ctx, id, func(a *actor) error {
		if a.run == nil && a.st.meta.Status.AcceptsInput() && len(a.st.mail) > 0 {
			needs = true
			return a.wake(agentsv1.RunTrigger_RUN_TRIGGER_MAIL)
		}
		return nil
	})
	if (!needs || err != nil) && r.ctx.Err() == nil {
		r.slots.pass()
	}
	if err != nil && errs.KindOf(err) != errs.KindNotFound && r.ctx.Err() == nil {
		r.log.Warn("wake session", "session", id, "err", err)
	}
}

// ListMail lists a session's mail, newest first.
func (r *Runner) ListMail(ctx context.Context, owner, id string, pendingOnly bool) ([]session.Mail, error) {
	// The owner's check: on this server, or from the store for a
	// session another server holds.
	var err error
	elsewhere := r.runsElsewhere(ctx, id)
	if !elsewhere {
		_, err = r.control(ctx, owner, id, func(*actor) error { return nil })
		elsewhere = leaseHeld(err) || r.handedOver(err)
	}
	if elsewhere {
		_, err = r.metaElsewhere(ctx, owner, id)
	}
	if err != nil {
		return nil, err
	}
	return r.store.ListMail(ctx, id, pendingOnly)
}

func checkMail(b session.MailBody) error {
	switch b.Kind {
	case session.MailUserMessage, session.MailAgentMessage:
		if b.Text == "" {
			return errs.Invalid(errs.CodeInvalidArgument, "mail text is empty")
		}
	case session.MailStopRun, session.MailCancelCalls, session.MailResume:
	default:
		return errs.Invalid(errs.CodeInvalidArgument, "unknown mail kind %q", b.Kind)
	}
	return nil
}

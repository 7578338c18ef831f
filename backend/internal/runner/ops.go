package runner

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/wire"
)

// AnyOwner, as the owner of an operation, acts on every owner's sessions
// (an admin, or the server itself).
const AnyOwner = ""

// Message is a user message.
type Message struct {
	Text        string
	Attachments []session.Attachment
	// Interrupt cuts the step in flight short instead of waiting for it.
	Interrupt bool
}

// RunOptions tune the run a request starts.
type RunOptions struct {
	// Hold stores the message without starting a run.
	Hold     bool
	MaxSteps int
	// IdempotencyKey makes a retry of the request return the first
	// answer instead of posting again.
	IdempotencyKey string
}

// CreateRequest creates a session.
type CreateRequest struct {
	Agent    string
	Message  *Message
	Run      RunOptions
	Params   map[string]string
	ParentID string
	Title    string
	// IdempotencyKey makes a retry return the session the first request
	// created.
	IdempotencyKey string

	// helperOf, for a helper's child, names the parent's call it answers.
	helperOf *helperOf
}

type helperOf struct {
	callID, agent string
}

// View is a session as a client sees it.
type View struct {
	Meta     session.Meta
	Turns    []session.Turn
	Deferred []session.DeferredCall
	// Position is the event position the view reflects.
	Position events.Position
	// InProgress is the step in flight, nil without one.
	InProgress *InProgress
}

const maxTitle = 80

// CreateSession creates a session, stores its first message if any, and
// starts a run unless told to hold. The session, its first turn and the
// start of its run are one write.
func (r *Runner) CreateSession(ctx context.Context, owner string, req CreateRequest) (View, error) {
	if done, err := r.replayed(ctx, owner, req.IdempotencyKey, opCreate); err != nil || done != nil {
		if err != nil {
			return View{}, err
		}
		return r.GetSession(ctx, owner, done.SessionID, false, 0)
	}
	agent, err := r.cat.Get(req.Agent)
	if err != nil {
		return View{}, err
	}
	if err := checkMessage(req.Message); err != nil {
		return View{}, err
	}
	if req.Message != nil && !req.Run.Hold {
		if missing := missingIn(agent.Params, req.Params); len(missing) > 0 {
			return View{}, paramsRequired(missing)
		}
	}
	now := r.now()
	meta := session.Meta{
		ID:      uuid.NewString(),
		Agent:   agent.Slug,
		Owner:   owner,
		Title:   req.Title,
		Status:  session.StatusReady,
		Created: now,
		Updated: now,
	}
	if req.ParentID != "" {
		parent, err := r.store.GetMeta(ctx, req.ParentID)
		if err != nil {
			return View{}, err
		}
		if owner != AnyOwner && parent.Owner != owner {
			return View{}, errs.NotFound("unknown_session", "unknown session %s", req.ParentID)
		}
		meta.ParentID = parent.ID
		meta.Owner = parent.Owner
		meta.Depth = parent.Depth + 1
	}
	var turns []session.Turn
	if req.Message != nil {
		turns = []session.Turn{{Index: 0, Created: now, User: &session.UserTurn{Text: req.Message.Text, Attachments: req.Message.Attachments}}}
		if meta.Title == "" {
			meta.Title = titleFrom(req.Message.Text)
		}
	}
	meta.TurnCount = len(turns)
	view, err := r.open(ctx, meta, turns, req.Params, func(a *actor, e *edit) error {
		e.idem = r.idempotency(owner, req.IdempotencyKey, opCreate, keyed{SessionID: meta.ID})
		if h := req.helperOf; h != nil {
			e.helpers = []store.HelperCall{{SessionID: meta.ParentID, CallID: h.callID, ChildID: meta.ID, Created: now}}
			e.events = append(e.events, &agentsv1.Event{SessionId: meta.ParentID, Owner: meta.Owner, Kind: "subcall.started",
				Body: &agentsv1.Event_SubcallStarted{SubcallStarted: &agentsv1.SubcallStarted{
					ChildSessionId: meta.ID, Agent: h.agent, CallId: h.callID, Depth: int32(meta.Depth),
				}}})
		}
		if req.Message == nil || req.Run.Hold {
			return a.apply(e)
		}
		return a.startRun(e, agentsv1.RunTrigger_RUN_TRIGGER_MESSAGE, req.Run.MaxSteps)
	})
	if errs.KindOf(err) == errs.KindConflict && req.IdempotencyKey != "" {
		// The same key raced this request and won: answer as it did.
		if done, rerr := r.replayed(ctx, owner, req.IdempotencyKey, opCreate); rerr == nil && done != nil {
			return r.GetSession(ctx, owner, done.SessionID, false, 0)
		}
	}
	return view, err
}

// open makes a new session live with its params and writes it through
// write (with session.created first), which may start a run. Until write
// succeeds nothing of the session exists.
func (r *Runner) open(ctx context.Context, meta session.Meta, turns []session.Turn, params map[string]string, write func(a *actor, e *edit) error) (View, error) {
	a, release, err := r.adopt(&state{meta: session.Meta{ID: meta.ID, Owner: meta.Owner, Agent: meta.Agent}})
	if err != nil {
		return View{}, err
	}
	defer release()
	var view View
	err = a.call(ctx, func(a *actor) error {
		e := &edit{meta: meta, turns: turns, create: true}
		e.events = append(e.events, &agentsv1.Event{SessionId: meta.ID, Owner: meta.Owner, Kind: "session.created",
			Body: &agentsv1.Event_SessionCreated{SessionCreated: &agentsv1.SessionCreated{Meta: wire.Meta(meta)}}})
		a.setParams(params)
		if err := write(a, e); err != nil {
			a.deleted = true // never stored: the actor goes
			a.r.params.forget(meta.ID)
			return err
		}
		view = a.view()
		return nil
	})
	return view, err
}

// PostMessage sends a user message. An idle session stores it as a user
// turn and starts a run, in one write; during a run it becomes mail folded
// at the next step, and with Interrupt it also cuts the step in flight
// short.
func (r *Runner) PostMessage(ctx context.Context, owner, id string, msg Message, opts RunOptions, params map[string]string) (session.Meta, string, error) {
	if err := checkMessage(&msg); err != nil {
		return session.Meta{}, "", err
	}
	var meta session.Meta
	var mailID string
	err := r.withSession(ctx, id, func(a *actor) error {
		if err := a.authorize(owner); err != nil {
			return err
		}
		if done, err := r.replayed(ctx, a.owner, opts.IdempotencyKey, opPost); err != nil || done != nil {
			if err == nil && done.SessionID != id {
				err = errKeyReused
			}
			if err == nil {
				meta, mailID = a.st.meta, done.MailID
			}
			return err
		}
		if a.run != nil || !a.st.meta.Status.AcceptsInput() {
			a.setParams(params)
			m, err := a.addMail(ctx, session.Mail{
				Sender:   session.Sender{Kind: session.SenderUser, Name: a.st.meta.Owner},
				Priority: priorityOf(msg.Interrupt),
				Body:     session.MailBody{Kind: session.MailUserMessage, Text: msg.Text, AttachmentNames: attachmentNames(msg.Attachments), Attachments: msg.Attachments},
			}, opts.IdempotencyKey, opPost)
			if err != nil {
				return err
			}
			mailID = m.ID
			meta = a.st.meta
			return nil
		}
		if missing := missingIn(a.agentParams(), a.withParams(params)); len(missing) > 0 && !opts.Hold {
			return paramsRequired(missing)
		}
		a.setParams(params)
		e := a.edit()
		if e.meta.Title == "" {
			e.meta.Title = titleFrom(msg.Text)
		}
		e.idem = r.idempotency(a.owner, opts.IdempotencyKey, opPost, keyed{SessionID: id})
		a.addUserTurn(e, session.UserTurn{Text: msg.Text, Attachments: msg.Attachments})
		if opts.Hold {
			if err := a.apply(e); err != nil {
				return err
			}
		} else if err := a.startRun(e, agentsv1.RunTrigger_RUN_TRIGGER_MESSAGE, opts.MaxSteps); err != nil {
			return err
		}
		meta = a.st.meta
		return nil
	})
	return meta, mailID, err
}

// addMail stores mail for the session with its mail.accepted event,
// and, for urgent mail during a run, cuts the step in flight.
func (a *actor) addMail(ctx context.Context, m session.Mail, key, op string) (session.Mail, error) {
	if a.unsynced != nil {
		// As for apply: an earlier failed write goes first, or nothing
		// does.
		if err := a.resync(); err != nil {
			return session.Mail{}, errStoreUnavailable
		}
	}
	m.ID = uuid.NewString()
	m.SessionID = a.id
	m.Created = a.r.now()
	if m.Priority == "" {
		m.Priority = session.PriorityNormal
	}
	ch := &store.Change{NewMail: []session.Mail{m}, Idempotency: a.r.idempotency(a.owner, key, op, keyed{SessionID: a.id, MailID: m.ID})}
	ev := &agentsv1.Event{SessionId: a.id, Owner: a.owner, Kind: "mail.accepted",
		Body: &agentsv1.Event_MailAccepted{MailAccepted: &agentsv1.MailAccepted{Envelope: wire.Mail(m)}}}
	if err := a.r.write(ctx, ch, []*agentsv1.Event{ev}); err != nil {
		return session.Mail{}, err
	}
	a.st.mail = append(a.st.mail, m)
	a.st.meta.PendingMail++
	if m.Priority == session.PriorityUrgent {
		a.cutStep()
	}
	return m, nil
}

// GetSession returns a session. With wait, it first waits (up to timeout)
// until no run is active.
func (r *Runner) GetSession(ctx context.Context, owner, id string, wait bool, timeout time.Duration) (View, error) {
	if wait {
		var idle <-chan struct{}
		err := r.withSession(ctx, id, func(a *actor) error {
			if err := a.authorize(owner); err != nil {
				return err
			}
			idle = a.waitIdle()
			return nil
		})
		if err != nil {
			return View{}, err
		}
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-idle:
		case <-timer.C:
		case <-ctx.Done():
			return View{}, ctx.Err()
		}
	}
	var view View
	err := r.withSession(ctx, id, func(a *actor) error {
		if err := a.authorize(owner); err != nil {
			return err
		}
		view = a.view()
		return nil
	})
	return view, err
}

// ListSessions lists sessions from the store, which every change reaches
// before it is announced.
func (r *Runner) ListSessions(ctx context.Context, owner string, f store.ListFilter) ([]session.Meta, string, error) {
	f.Owner = owner
	return r.store.ListSessions(ctx, f)
}

// runOutcome is how a run ended, for a helper call waiting on its child.
type runOutcome struct {
	status session.Status
	reason string
	text   string
}

// awaitRun waits until the session has no active run and returns how it
// ended. It returns ctx's error if ctx ends first.
func (r *Runner) awaitRun(ctx context.Context, id string) (runOutcome, error) {
	var idle <-chan struct{}
	err := r.withSession(ctx, id, func(a *actor) error {
		// A child found running without a run was not recovered yet
		// after a restart (recovery takes the parent up first): it
		// resumes now, or the call would take it for stopped.
		if err := a.recoverRun(ctx); err != nil {
			return err
		}
		idle = a.waitIdle()
		return nil
	})
	if err != nil {
		return runOutcome{}, err
	}
	select {
	case <-idle:
	case <-ctx.Done():
		return runOutcome{}, ctx.Err()
	}
	var out runOutcome
	err = r.withSession(ctx, id, func(a *actor) error {
		out = runOutcome{status: a.st.meta.Status, reason: a.st.meta.StatusReason, text: a.lastAnswer()}
		return nil
	})
	return out, err
}

// lastAnswer is the text of the newest LLM turn.
func (a *actor) lastAnswer() string {
	for i := len(a.st.turns) - 1; i >= 0; i-- {
		if t := a.st.turns[i]; t.LLM != nil {
			return t.LLM.Text
		}
	}
	return ""
}

// view copies what a client may see. Turns are never modified once
// appended, so sharing them is safe; the slice is capped so an append by
// the caller cannot reach the actor's array.
func (a *actor) view() View {
	n := len(a.st.turns)
	progress, pos := a.inProgress()
	return View{
		Meta:       a.st.meta,
		Turns:      a.st.turns[:n:n],
		Deferred:   append([]session.DeferredCall(nil), a.st.deferred...),
		Position:   pos,
		InProgress: progress,
	}
}

// authorize hides another owner's session: it is not found, not refused,
// so ids of other owners cannot be probed.
func (a *actor) authorize(owner string) error {
	if owner != AnyOwner && a.st.meta.Owner != owner {
		return errs.NotFound("unknown_session", "unknown session %s", a.id)
	}
	return nil
}

// setParams merges client-supplied params; they live in memory only.
func (a *actor) setParams(params map[string]string) {
	if len(params) > 0 {
		a.params = a.r.params.merge(a.id, params)
	}
}

// withParams returns the session's params with params merged in, without
// keeping them.
func (a *actor) withParams(params map[string]string) map[string]string {
	out := a.paramsCopy()
	for k, v := range params {
		out[k] = v
	}
	return out
}

// agentParams are the params the session's agent declares.
func (a *actor) agentParams() []agentfile.Param {
	if a.agent == nil {
		return nil
	}
	return a.agent.Params
}

func checkMessage(m *Message) error {
	if m == nil {
		return nil
	}
	if strings.TrimSpace(m.Text) == "" && len(m.Attachments) == 0 {
		return errs.Invalid("invalid_argument", "message text is empty")
	}
	if !utf8.ValidString(m.Text) {
		return errs.Invalid("invalid_argument", "message text is not valid UTF-8")
	}
	return nil
}

func priorityOf(interrupt bool) session.Priority {
	if interrupt {
		return session.PriorityUrgent
	}
	return session.PriorityNormal
}

func attachmentNames(list []session.Attachment) []string {
	var names []string
	for _, a := range list {
		names = append(names, a.Name)
	}
	return names
}

// titleFrom makes a title from the first line of a message.
func titleFrom(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if utf8.RuneCountInString(line) <= maxTitle {
		return line
	}
	runes := []rune(line)
	return string(runes[:maxTitle-1]) + "…"
}

// publicText is an error's text when it is safe to show to a model or a
// client; internal errors are reduced to a fixed text.
func publicText(err error) string {
	if e, ok := errs.As(err); ok && e.Kind != errs.KindInternal {
		return e.Message
	}
	return "internal error"
}

package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/committer"
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
	// Budget is the budget of the session's tree; only for a root
	// session.
	Budget *session.Budget
	// IdempotencyKey makes a retry return the session the first request
	// created.
	IdempotencyKey string
	// AgentVersion pins the session to this version of its stored agent;
	// 0 follows the latest.
	AgentVersion int64

	// helperOf, for a helper's child, names the parent's call it answers.
	helperOf *helperOf
	// firing, for a schedule's firing, is stored with the session.
	firing *store.FiringClaim
}

type helperOf struct {
	callID, agent string
	// narrowing is what a narrowed helper tool gives the child; it is
	// stored with the child's first turn.
	narrowing *session.Narrowing
}

// View is a session as a client sees it.
type View struct {
	Meta session.Meta
	// Turns are the turns the view carries, consecutive from FirstTurn;
	// Meta.TurnCount counts every turn.
	Turns     []session.Turn
	FirstTurn int
	Deferred  []session.DeferredCall
	// Position is the event position the view reflects.
	Position events.Position
	// InProgress is the step in flight, nil without one.
	InProgress *InProgress
	// Cache keeps the session's turn encodings by turn index (see
	// TurnCache); nil when the view has none.
	Cache *TurnCache
}

const maxTitle = 80

// CreateSession creates a session, stores its first message if any, and
// starts a run unless told to hold. The session, its first turn and the
// start of its run are one write.
func (r *Runner) CreateSession(ctx context.Context, owner string, req CreateRequest) (View, error) {
	idem := keyFor(req.IdempotencyKey, opCreate, struct {
		Agent, ParentID, Title string
		Message                *Message
		Hold                   bool
		MaxSteps               int
		Budget                 *session.Budget
		AgentVersion           int64
	}{req.Agent, req.ParentID, req.Title, req.Message, req.Run.Hold, req.Run.MaxSteps, req.Budget, req.AgentVersion})
	if done, err := r.replayed(ctx, owner, idem); err != nil || done != nil {
		if err != nil {
			return View{}, err
		}
		return r.GetSession(ctx, owner, done.SessionID, false, 0)
	}
	agent, err := r.cat.Get(req.Agent)
	if err != nil {
		return View{}, err
	}
	pin, err := r.pinned(ctx, agent, req.AgentVersion)
	if err != nil {
		return View{}, err
	}
	if pin != nil {
		agent = pin
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
		Title:   cleanTitle(req.Title),
		Status:  session.StatusReady,
		Created: now,
		Updated: now,
		// A stored agent's generation: should it be deleted and another
		// created under its slug, the session does not run that one.
		AgentGen: agent.Generation,
		AgentPin: req.AgentVersion,
	}
	if req.ParentID != "" {
		parent, err := r.store.GetMeta(ctx, req.ParentID)
		if err != nil {
			return View{}, err
		}
		if owner != AnyOwner && parent.Owner != owner {
			return View{}, errs.NotFound(errs.CodeUnknownSession, "unknown session %s", req.ParentID)
		}
		meta.ParentID = parent.ID
		meta.Owner = parent.Owner
		meta.Depth = parent.Depth + 1
		meta.RootID = parent.Root()
		meta.Budget, meta.TreeSpend = parent.Budget, parent.TreeSpend
		if req.Budget != nil {
			return View{}, errs.Invalid(errs.CodeInvalidArgument, "budget: a session with a parent spends its root session's budget (%s); set the budget there", parent.Root())
		}
	}
	switch {
	case req.Budget.Limited():
		meta.Budget = req.Budget
	case req.Budget == nil && req.ParentID == "" && agent.Budget.Limited():
		// The agent's own budget, when the client set none (an empty
		// one it set says: no limit).
		b := *agent.Budget
		meta.Budget = &b
	}
	var turns []session.Turn
	if req.Message != nil {
		turns = []session.Turn{{Index: 0, Created: now, User: &session.UserTurn{Text: req.Message.Text, Attachments: req.Message.Attachments}}}
		if req.helperOf != nil {
			turns[0].User.Narrowing = req.helperOf.narrowing
		}
		if meta.Title == "" {
			meta.Title = titleFrom(req.Message.Text)
		}
	}
	meta.TurnCount = len(turns)
	view, err := r.open(ctx, meta, turns, req.Params, func(a *actor, e *edit) error {
		e.idem = r.idempotency(owner, idem, keyed{SessionID: meta.ID})
		if meta.Budget != nil {
			e.treeBudget = meta.Budget
		}
		if h := req.helperOf; h != nil {
			e.helpers = []store.HelperCall{{SessionID: meta.ParentID, CallID: h.callID, ChildID: meta.ID, Created: now}}
			e.events = append(e.events, events.WithKind(&agentsv1.Event{SessionId: meta.ParentID, Owner: meta.Owner,
				Body: &agentsv1.Event_SubcallStarted{SubcallStarted: &agentsv1.SubcallStarted{
					ChildSessionId: meta.ID, Agent: h.agent, CallId: h.callID, Depth: int32(meta.Depth),
				}}}))
		}
		startedBy(e, req.firing)
		if req.Message == nil || req.Run.Hold {
			return a.apply(e)
		}
		return a.startRun(e, agentsv1.RunTrigger_RUN_TRIGGER_MESSAGE, req.Run.MaxSteps)
	})
	if errs.KindOf(err) == errs.KindConflict && req.IdempotencyKey != "" {
		// The same key raced this request and won: answer as it did.
		done, rerr := r.replayed(ctx, owner, idem)
		if rerr != nil {
			return View{}, rerr
		}
		if done != nil {
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
		e.events = append(e.events, events.WithKind(&agentsv1.Event{SessionId: meta.ID, Owner: meta.Owner,
			Body: &agentsv1.Event_SessionCreated{SessionCreated: &agentsv1.SessionCreated{Meta: wire.Meta(meta)}}}))
		a.setParams(params)
		if err := write(a, e); err != nil {
			a.ws.end(a.unknown()) // never stored: the actor goes
			a.r.params.forget(meta.ID)
			return err
		}
		view = a.view()
		return nil
	})
	if err != nil {
		return View{}, err // view is the actor's to write until fn ran (see actor.call)
	}
	if err := r.readTree(ctx, &view.Meta); err != nil {
		return View{}, err
	}
	return view, nil
}

// PostMessage sends a user message. An idle session stores it as a user
// turn and starts a run, in one write; during a run it becomes mail folded
// at the next step, and with Interrupt it also cuts the step in flight
// short.
func (r *Runner) PostMessage(ctx context.Context, owner, id string, msg Message, opts RunOptions, params map[string]string) (session.Meta, string, error) {
	p, err := r.postMessage(ctx, owner, id, msg, opts, params, false)
	return p.Meta, p.MailID, err
}

// Posted is what became of a message posted with PostMessageWait.
type Posted struct {
	// Meta is the summary once the message was accepted.
	Meta session.Meta
	// MailID is set when the message became mail.
	MailID string
	// View is the session once the run stopped (or the wait timed out),
	// with the turns stored since the message was accepted.
	View View

	// from is the turn count when the message was accepted; idle, taken
	// with wait, is closed once no run is active. elsewhere says another
	// server holds the session: the wait is for what the store says.
	from      int
	idle      <-chan struct{}
	elsewhere bool
}

// PostMessageWait posts like PostMessage, then waits (up to timeout)
// until the run the message started, or joined as mail, stops, and reads
// the turns stored since the message was accepted: the message's turn (or
// the one its mail was folded into) and the run's answers. The wait
// begins in the same actor call as the post, so it waits for that run
// and not a later one. A retry with the same idempotency key waits for
// the session and answers from the first request's turn.
func (r *Runner) PostMessageWait(ctx context.Context, owner, id string, msg Message, opts RunOptions, params map[string]string, timeout time.Duration) (Posted, error) {
	p, err := r.postMessage(ctx, owner, id, msg, opts, params, true)
	if err != nil {
		return Posted{}, err
	}
	var sel Turns
	if p.from > 0 {
		after := p.from - 1
		sel.After = &after
	}
	if p.elsewhere {
		// The post was the owner's, as the holder checked.
		read, err := r.awaitElsewhere(ctx, AnyOwner, id, ViewRequest{Timeout: timeout})
		if err != nil {
			return Posted{}, err
		}
		p.View, err = r.viewElsewhere(ctx, id, read, sel)
		return p, err
	}
	if _, err := await(ctx, p.idle, timeout); err != nil {
		return Posted{}, err
	}
	p.View, err = r.ReadSession(ctx, owner, id, ViewRequest{Turns: sel})
	return p, err
}

// postMessage is PostMessage, also saying the turn count it found and,
// with wait, taking the session's idle channel after the post. A
// session another server holds gets the message through it.
func (r *Runner) postMessage(ctx context.Context, owner, id string, msg Message, opts RunOptions, params map[string]string, wait bool) (Posted, error) {
	if err := checkMessage(&msg); err != nil {
		return Posted{}, err
	}
	ans, forwarded, err := onHolder(ctx, r, owner, id, postCommand{Message: msg, Run: opts, Params: params, wait: wait})
	return Posted{Meta: ans.Meta, MailID: ans.MailID, from: ans.From, idle: ans.idle, elsewhere: forwarded}, err
}

// postCommand is PostMessage on the session's holder.
type postCommand struct {
	Message Message           `json:"message"`
	Run     RunOptions        `json:"run"`
	Params  map[string]string `json:"params,omitempty"`
	// wait takes the session's idle channel after the post; a post
	// forwarded to another server waits for what the store says.
	wait bool
}

type postAnswer struct {
	Meta   session.Meta `json:"meta"`
	MailID string       `json:"mail_id,omitempty"`
	From   int          `json:"from"`
	// idle is the session's idle channel, with wait.
	idle <-chan struct{}
}

func (postCommand) name() string { return "post_message" }

func (b postCommand) apply(ctx context.Context, r *Runner, at target) (postAnswer, error) {
	if at.forwarded() && b.Run.IdempotencyKey == "" {
		b.Run.IdempotencyKey = at.commandKey()
	}
	p, err := r.postLocal(ctx, at.owner, at.session, b.Message, b.Run, b.Params, b.wait)
	return postAnswer{Meta: p.Meta, MailID: p.MailID, From: p.from, idle: p.idle}, err
}

// postLocal posts on this server (see postMessage).
func (r *Runner) postLocal(ctx context.Context, owner, id string, msg Message, opts RunOptions, params map[string]string, wait bool) (Posted, error) {
	// One allocation for what the actor's call writes.
	p := &Posted{}
	idem := keyFor(opts.IdempotencyKey, opPost, struct {
		Session  string
		Message  Message
		Hold     bool
		MaxSteps int
	}{id, msg, opts.Hold, opts.MaxSteps})
	err := r.withSession(ctx, id, func(a *actor) error {
		if err := a.authorize(owner); err != nil {
			return err
		}
		if wait {
			// The wait starts after the post, in this call, so that it
			// is for the run the post started or joined.
			defer func() { p.idle = a.waitIdle() }()
		}
		if done, err := r.replayed(ctx, a.owner, idem); err != nil || done != nil {
			if err == nil && done.SessionID != id {
				err = errKeyReused
			}
			if err == nil {
				p.Meta, p.MailID, p.from = a.st.meta, done.MailID, done.Turns
			}
			return err
		}
		if _, err := r.agentFor(ctx, a.st.meta, 0); agentGone(err) {
			return err
		}
		p.from = len(a.st.turns)
		if a.run != nil || !a.st.meta.Status.AcceptsInput() {
			a.setParams(params)
			m, err := a.addMail(ctx, session.Mail{
				Sender:   session.Sender{Kind: session.SenderUser, Name: a.st.meta.Owner},
				Priority: priorityOf(msg.Interrupt),
				Body:     session.MailBody{Kind: session.MailUserMessage, Text: msg.Text, AttachmentNames: attachmentNames(msg.Attachments), Attachments: msg.Attachments},
			}, idem, nil)
			if err != nil {
				return err
			}
			p.MailID = m.ID
			p.Meta = a.st.meta
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
		e.idem = r.idempotency(a.owner, idem, keyed{SessionID: id, Turns: p.from})
		a.addUserTurn(e, session.UserTurn{Text: msg.Text, Attachments: msg.Attachments})
		if opts.Hold {
			if err := a.apply(e); err != nil {
				return err
			}
		} else if err := a.startRun(e, agentsv1.RunTrigger_RUN_TRIGGER_MESSAGE, opts.MaxSteps); err != nil {
			return err
		}
		p.Meta = a.st.meta
		return nil
	})
	if err != nil {
		return Posted{}, err // what fn writes is the actor's until it ran (see actor.call)
	}
	return *p, nil
}

// addMail stores mail for the session with its mail.accepted event,
// and, for urgent mail during a run, cuts the step in flight.
func (a *actor) addMail(ctx context.Context, m session.Mail, idem keyedRequest, claim *store.FiringClaim) (session.Mail, error) {
	if err := a.ws.writeRefusal(); err != nil {
		return session.Mail{}, err
	}
	if a.ws.inDoubt() {
		return session.Mail{}, errStoreUnavailable // as for apply
	}
	if a.ws.retrying() {
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
	ch := &store.Change{NewMail: []session.Mail{m}, Idempotency: a.r.idempotency(a.owner, idem, keyed{SessionID: a.id, MailID: m.ID, Turns: len(a.st.turns)})}
	evs := []*agentsv1.Event{events.WithKind(&agentsv1.Event{SessionId: a.id, Owner: a.owner,
		Body: &agentsv1.Event_MailAccepted{MailAccepted: &agentsv1.MailAccepted{Envelope: wire.Mail(m)}}})}
	if claim != nil {
		// A schedule's firing that queues its message: stored with it.
		ch.Firing = claim
		evs = append(evs, firedEvent(claim.Firing, a.owner))
	}
	if err := a.write(ctx, ch, evs); err != nil {
		if committer.Classify(err) != committer.Transient {
			return session.Mail{}, err
		}
		landed, told := a.mailLanded(m.ID)
		if !told {
			a.ws.suspect(&doubt{landed: func() (bool, bool) { return a.mailLanded(m.ID) }})
		}
		if !landed {
			return session.Mail{}, err
		}
	}
	a.st.mail = append(a.st.mail, m)
	a.st.meta.PendingMail++
	if m.Priority == session.PriorityUrgent {
		a.interrupt()
	}
	return m, nil
}

// mailLanded reports whether mail whose write failed is stored after
// all: the connection was lost while the database committed it, so the
// error told nothing. The mail's id is new with the write, so finding it
// means the write landed, with its event and idempotency record. told is
// false when the store could not be asked (see landed).
func (a *actor) mailLanded(id string) (landed, told bool) {
	_, err := a.r.mailByID(a.r.ctx, a.id, id)
	switch {
	case err == nil:
		return true, true
	case errs.KindOf(err) == errs.KindNotFound:
		return false, true
	}
	return false, false
}

// interrupt acts on urgent mail: it answers the approvals nobody gave
// yet, and the round goes on with the message, or cuts the step in
// flight short.
func (a *actor) interrupt() {
	running := a.run != nil
	if _, err := a.settleApprovals(interruptedApproval, agentsv1.RunTrigger_RUN_TRIGGER_MESSAGE); err != nil {
		a.log().Error("settle approvals", "session", a.id, "err", err)
	}
	if running {
		// A run the settled round started is not cut: it is the one
		// that takes the message.
		a.cutStep()
	}
}

// Turns selects the turns a view carries: those after After and before
// Before (absent: from the first, to the newest), then the first Limit or
// the last Last of them (0: no limit). The zero value selects every turn;
// None selects none.
type Turns struct {
	None          bool
	After, Before *int
	Limit, Last   int
}

// ViewRequest says what ReadSession returns.
type ViewRequest struct {
	// Wait first waits, up to Timeout, until no run is active.
	Wait    bool
	Timeout time.Duration
	Turns   Turns
}

// GetSession returns a session with every turn. With wait, it first
// waits (up to timeout) until no run is active.
func (r *Runner) GetSession(ctx context.Context, owner, id string, wait bool, timeout time.Duration) (View, error) {
	return r.ReadSession(ctx, owner, id, ViewRequest{Wait: wait, Timeout: timeout})
}

// ReadSession returns a session with the turns req selects. A selection
// outside the session's turns is refused before any wait: turns are only
// ever appended, so one that fits now fits after the wait too. The view
// shares the selected turns with the actor and copies nothing else of
// the history.
func (r *Runner) ReadSession(ctx context.Context, owner, id string, req ViewRequest) (View, error) {
	if r.runsElsewhere(ctx, id) {
		return r.readElsewhere(ctx, owner, id, req)
	}
	// One allocation for what the actor's call writes.
	rd := &sessionRead{owner: owner, req: req}
	err := r.withSession(ctx, id, rd.look)
	if !rd.read && err == nil {
		// A run was active: wait for its end. The actor reads the
		// session for the wait once the command that ended the run is
		// done (see answerReads); a wait it could not answer, or that
		// timed out, reads in a call of its own.
		woken, waitErr := await(ctx, rd.idle, req.Timeout)
		if waitErr != nil {
			return View{}, waitErr
		}
		rd.req.Wait = false // waited already
		if woken && rd.answered {
			rd.view, rd.read = rd.answer, true
		} else {
			err = r.withSession(ctx, id, rd.look)
		}
	}
	if leaseHeld(err) || r.handedOver(err) {
		return r.readElsewhere(ctx, owner, id, rd.req)
	}
	if err != nil {
		return View{}, err // view is the actor's to write until fn ran (see actor.call)
	}
	view := rd.view
	if err := r.readTree(ctx, &view.Meta); err != nil {
		return View{}, err
	}
	return view, nil
}

// sessionRead is a ReadSession in the actor's calls.
type sessionRead struct {
	owner string
	req   ViewRequest
	view  View
	read  bool
	// idle is closed once the run the read waits for ended; answer is
	// the session the actor read for it then, when answered (both
	// written before idle is closed, and only then).
	idle     chan struct{}
	answer   View
	answered bool
}

// look takes the view in the actor's call; with wait, only when no run
// is active, and otherwise the read waits for the run's end (idle).
func (rd *sessionRead) look(a *actor) error {
	if err := a.authorize(rd.owner); err != nil {
		return err
	}
	lo, hi, err := rd.req.Turns.bounds(len(a.st.turns))
	if err != nil {
		return err
	}
	if rd.req.Wait && a.run != nil {
		rd.idle = make(chan struct{})
		a.idleReads = append(a.idleReads, rd)
		return nil
	}
	if rd.idle != nil {
		// It waited and timed out: the actor must not answer it too.
		a.forgetRead(rd)
	}
	rd.view, rd.read = a.viewRange(lo, hi), true
	return nil
}

// answerReads answers the reads that waited for the run that ended
// with the session as that run's last command left it, as the read's
// own call would have right after (see look), without the call. A read
// the actor cannot answer now is woken to ask itself, and meets what
// refuses it.
func (a *actor) answerReads() {
	for i, rd := range a.dueReads {
		a.dueReads[i] = nil
		if a.ws.refusal() == nil && !a.ws.inDoubt() && a.authorize(rd.owner) == nil {
			if lo, hi, err := rd.req.Turns.bounds(len(a.st.turns)); err == nil {
				rd.answer, rd.answered = a.viewRange(lo, hi), true
			}
		}
		close(rd.idle)
	}
	a.dueReads = a.dueReads[:0]
}

// releaseReads wakes the waiting reads unanswered: each asks in a call
// of its own, which tells it why the actor can no longer answer.
func (a *actor) releaseReads() {
	for _, reads := range []*[]*sessionRead{&a.idleReads, &a.dueReads} {
		for _, rd := range *reads {
			close(rd.idle)
		}
		*reads = nil
	}
}

// forgetRead takes rd off the waiting reads.
func (a *actor) forgetRead(rd *sessionRead) {
	for _, reads := range []*[]*sessionRead{&a.idleReads, &a.dueReads} {
		*reads = slices.DeleteFunc(*reads, func(r *sessionRead) bool { return r == rd })
	}
}

// await waits until idle is closed (woken) or timeout passes; it returns
// ctx's error if ctx ends first.
func await(ctx context.Context, idle <-chan struct{}, timeout time.Duration) (woken bool, err error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-idle:
		return true, nil
	case <-timer.C:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	return false, nil
}

// bounds checks the selection against a session of n turns and returns
// the range [lo, hi) it carries. Without turns the range is empty at the
// head.
func (t Turns) bounds(n int) (lo, hi int, err error) {
	if t.Limit < 0 || t.Last < 0 {
		return 0, 0, errs.Invalid(errs.CodeInvalidArgument, "turn_limit and last_turns must not be negative")
	}
	if t.None {
		if t.After != nil || t.Before != nil || t.Limit != 0 || t.Last != 0 {
			return 0, 0, errs.Invalid(errs.CodeInvalidArgument, "meta_only leaves every turn out: it takes no after_turn, before_turn, turn_limit or last_turns")
		}
		return n, n, nil
	}
	if t.Limit > 0 && t.Last > 0 {
		return 0, 0, errs.Invalid(errs.CodeInvalidArgument, "turn_limit counts from the start of the range and last_turns from its end: set one of them")
	}
	lo, hi = 0, n
	if t.After != nil {
		if a := *t.After; a < 0 || a >= n {
			return 0, 0, errs.Invalid(errs.CodeInvalidArgument, "after_turn %d is out of range: %s", a, turnsRange(n, n-1))
		}
		lo = *t.After + 1
	}
	if t.Before != nil {
		b := *t.Before
		if b < 0 || b > n {
			return 0, 0, errs.Invalid(errs.CodeInvalidArgument, "before_turn %d is out of range: %s", b, turnsRange(n, n))
		}
		if t.After != nil && b <= *t.After {
			return 0, 0, errs.Invalid(errs.CodeInvalidArgument, "before_turn %d must be greater than after_turn %d", b, *t.After)
		}
		hi = b
	}
	if t.Limit > 0 && hi-lo > t.Limit {
		hi = lo + t.Limit
	}
	if t.Last > 0 && hi-lo > t.Last {
		lo = hi - t.Last
	}
	return lo, hi, nil
}

// turnsRange says, for an out-of-range index, how many turns the session
// has and the largest index allowed.
func turnsRange(n, max int) string {
	if max < 0 {
		return "the session has no turns"
	}
	return fmt.Sprintf("the session has %d turns, so at most %d", n, max)
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
	// waits, for a session that stopped to wait for its clients (or is
	// paused), says what for (see waitsFor); "" when it is at rest.
	waits string
}

// awaitRun waits until the session has no active run and returns how it
// ended. It returns ctx's error if ctx ends first.
func (r *Runner) awaitRun(ctx context.Context, id string) (runOutcome, error) {
	var idle <-chan struct{}
	err := r.withSession(ctx, id, func(a *actor) error {
		// A child found running without a run was not recovered yet
		// after a restart (recovery takes the parent up first): it
		// resumes now, or the call would take it for stopped.
		if err := a.recoverRun(); err != nil {
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
		out = runOutcome{status: a.st.meta.Status, reason: a.st.meta.StatusReason, text: a.lastAnswer(), waits: a.waitsFor()}
		return nil
	})
	if err != nil {
		// Given up (ctx done), the read may still run: out is the
		// actor's to write until then (see actor.call).
		return runOutcome{}, err
	}
	return out, nil
}

// lastAnswer is the text of the newest LLM turn.
func (a *actor) lastAnswer() string { return lastAnswerOf(a.st.turns) }

func lastAnswerOf(turns []session.Turn) string {
	for i := len(turns) - 1; i >= 0; i-- {
		if t := turns[i]; t.LLM != nil {
			return t.LLM.Text
		}
	}
	return ""
}

// view copies what a client may see, every turn included.
func (a *actor) view() View { return a.viewRange(0, len(a.st.turns)) }

// viewRange is the view carrying turns [lo, hi). Turns are never
// modified once appended, so sharing them is safe; the slice is capped so
// an append by the caller cannot reach the actor's array.
func (a *actor) viewRange(lo, hi int) View {
	progress, pos := a.inProgress()
	if a.turnCache == nil && hi > lo {
		a.turnCache = &TurnCache{budget: &a.r.turnBudget}
	}
	return View{
		Cache:      a.turnCache,
		Meta:       a.st.meta,
		Turns:      a.st.turns[lo:hi:hi],
		FirstTurn:  lo,
		Deferred:   append([]session.DeferredCall(nil), a.st.deferred...),
		Position:   pos,
		InProgress: progress,
	}
}

// authorize hides another owner's session: it is not found, not refused,
// so ids of other owners cannot be probed.
func (a *actor) authorize(owner string) error {
	if owner != AnyOwner && a.st.meta.Owner != owner {
		return errs.NotFound(errs.CodeUnknownSession, "unknown session %s", a.id)
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
		return errs.Invalid(errs.CodeInvalidArgument, "message text is empty")
	}
	if !utf8.ValidString(m.Text) {
		return errs.Invalid(errs.CodeInvalidArgument, "message text is not valid UTF-8")
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
	line = cleanTitle(line)
	if utf8.RuneCountInString(line) <= maxTitle {
		return line
	}
	runes := []rune(line)
	return string(runes[:maxTitle-1]) + "…"
}

// cleanTitle is a title as it is kept: a title is shown on terminals,
// in lists and in headers, where a control character (an escape
// sequence that retitles or drives a terminal) must not reach. Tabs and
// line breaks become spaces; other control characters are dropped.
func cleanTitle(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// publicText is an error's text when it is safe to show to a model or a
// client; internal errors are reduced to a fixed text.
func publicText(err error) string {
	if e, ok := errs.As(err); ok && e.Kind != errs.KindInternal {
		return e.Message
	}
	return "internal error"
}

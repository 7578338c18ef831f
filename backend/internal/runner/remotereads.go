package runner

import (
	"context"
	"strings"
	"sync"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/wire"
)

// Reads of a session another server holds. Its durable state (meta,
// turns, deferred calls, mail) is read from the store, without taking
// the session; the step in flight, which only the holder has, comes from
// the deltas the holder streams, which reach this server's hub (see
// remoteProgress). A wait is for the status events every server's hub
// gets, with a poll of the store as a safety net.

// readPoll is how often a wait for a session another server holds reads
// the store again, in case an event that ends it was lost.
const readPoll = 500 * time.Millisecond

// leaseHeld reports whether err says another server holds the session.
func leaseHeld(err error) bool { return errs.CodeOf(err) == errs.CodeLeaseHeld }

// runsElsewhere reports whether another server holds the session, so
// that a read goes to the store without trying to take the session
// first. It is a hint: a load that finds the session held fails with
// lease_held, which reads from the store too.
func (r *Runner) runsElsewhere(ctx context.Context, id string) bool {
	return r.place.Elsewhere(ctx, id)
}

// readElsewhere is ReadSession for a session another server holds.
func (r *Runner) readElsewhere(ctx context.Context, owner, id string, req ViewRequest) (View, error) {
	var read remoteRead
	var err error
	if req.Wait {
		read, err = r.awaitElsewhere(ctx, owner, id, req)
	} else {
		read, err = r.readMetaElsewhere(ctx, owner, id)
	}
	if err != nil {
		return View{}, err
	}
	return r.viewElsewhere(ctx, id, read, req.Turns)
}

// remoteRead is a session's metadata as the store had it, with the step
// in flight as the hub's deltas built it and the hub's position, both
// taken just before the metadata was read: the store may be newer, so a
// client subscribing after the position may see an event it has, but
// never misses one.
type remoteRead struct {
	meta session.Meta
	step stepView
	pos  events.Position
}

// readMetaElsewhere reads a session's metadata from the store for the
// owner, with the step in flight and the position before it.
func (r *Runner) readMetaElsewhere(ctx context.Context, owner, id string) (remoteRead, error) {
	step, pos := r.others.of(id)
	meta, err := r.metaElsewhere(ctx, owner, id)
	return remoteRead{meta: meta, step: step, pos: pos}, err
}

// viewElsewhere makes a view of the read metadata with the turns sel
// selects, read from the store: only those, bounded by the metadata's
// count, so that they agree with it (turns are only ever appended).
func (r *Runner) viewElsewhere(ctx context.Context, id string, read remoteRead, sel Turns) (View, error) {
	meta := read.meta
	lo, hi, err := sel.bounds(meta.TurnCount)
	if err != nil {
		return View{}, err
	}
	turns, err := r.store.LoadTurns(ctx, id, lo, hi)
	if err != nil {
		return View{}, err
	}
	// The meta counts the calls that wait for a client: with none, there
	// is nothing to read.
	var deferred []session.DeferredCall
	if meta.PendingCalls > 0 {
		pending, err := r.store.PendingDeferred(ctx, id)
		if err != nil {
			return View{}, err
		}
		for _, d := range pending {
			if clientAnswered(d.Reason) {
				deferred = append(deferred, d)
			}
		}
		meta.PendingCalls = len(deferred)
	}
	v := View{Meta: meta, Turns: turns, FirstTurn: lo, Deferred: deferred, Position: read.pos}
	if meta.Status == session.StatusRunning {
		v.InProgress = read.step.inProgress(meta.TurnCount)
	}
	return v, nil
}

// metaElsewhere reads a session's meta from the store for the owner.
func (r *Runner) metaElsewhere(ctx context.Context, owner, id string) (session.Meta, error) {
	meta, err := r.store.GetMeta(ctx, id)
	if err != nil {
		return session.Meta{}, err
	}
	if owner != AnyOwner && meta.Owner != owner {
		return session.Meta{}, errs.NotFound(errs.CodeUnknownSession, "unknown session %s", id)
	}
	return meta, nil
}

// awaitElsewhere checks that the owner may read the session and that
// req's turns are within it, then waits, up to req.Timeout, until the
// store says the session has no active run, and returns the last read.
// It returns ctx's error if ctx ends first, the store's if the session
// is gone.
//
// It subscribes before it reads, so an event that ends the run is never
// missed between the two. Such an event makes it read the store again
// rather than end the wait: another server's events reach this hub
// late, and the end of the run before could arrive after this one
// started. An update that says the session is running (most of a run's)
// cannot end the wait, and is not worth a read; one with more turns than
// the read found is newer than the read, and its metadata is the answer.
func (r *Runner) awaitElsewhere(ctx context.Context, owner, id string, req ViewRequest) (remoteRead, error) {
	sub, _ := r.hub.Subscribe(events.SessionScope(id), nil)
	defer sub.Close()
	evs := sub.C()
	timer := time.NewTimer(req.Timeout)
	defer timer.Stop()
	poll := time.NewTicker(readPoll)
	defer poll.Stop()
	read, err := r.readMetaElsewhere(ctx, owner, id)
	if err != nil {
		return read, err
	}
	if _, _, err := req.Turns.bounds(read.meta.TurnCount); err != nil {
		return read, err
	}
	for read.meta.Status == session.StatusRunning {
	wait:
		for {
			select {
			case <-ctx.Done():
				return read, ctx.Err()
			case <-r.ctx.Done():
				return read, errClosing
			case <-timer.C:
				return read, nil
			case <-poll.C:
				break wait
			case ev, ok := <-evs:
				if !ok {
					evs = nil // cut: the poll goes on alone
					continue
				}
				switch ev.GetKind() {
				case events.KindSessionUpdated:
					m := ev.GetSessionUpdated().GetMeta()
					switch {
					case m.GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
					case int(m.GetTurnCount()) > read.meta.TurnCount:
						// Newer than the read, so not the end of a run
						// before it: the event's metadata is the store's
						// at the event's position. That position keeps
						// the hub's delta counter, so that it places
						// the deltas of the session's next run.
						return remoteRead{meta: wire.MetaFrom(m), pos: r.hub.PositionAfter(ev)}, nil
					default:
						break wait
					}
				case events.KindRunStopped, events.KindSessionFailed, events.KindSessionDeleted:
					break wait
				}
			}
		}
		if read, err = r.readMetaElsewhere(ctx, owner, id); err != nil {
			return read, err
		}
	}
	return read, nil
}

// remoteProgress is the step in flight of the sessions other servers
// run, as their deltas (text, thinking, tool calls) built it: a cache of what the holders stream,
// with one rule. It follows the hub; a step is reset by a delta of
// another turn, marked stored when the session's turn count passes it,
// and dropped when the run stops or the session goes; when the
// subscription is cut, everything is dropped and the following starts
// again. It is best-effort, like the deltas it is made of.
type remoteProgress struct {
	mu    sync.Mutex
	pos   events.Position
	steps map[string]*remoteStep
}

// maxRemoteSteps bounds the steps kept: a run whose end never arrived
// must not keep its text for ever.
const maxRemoteSteps = 4096

type remoteStep struct {
	turnIndex      int
	text, thinking strings.Builder
	calls          streamedCalls
	// stored says the model's turn is in the history now; results are
	// the round's calls that finished since.
	stored  bool
	results []session.ToolResult
	// local says this server runs the session: its actor has the step.
	local bool
}

// stepView is a copy of a remoteStep, taken under the lock.
type stepView struct {
	ok             bool
	turnIndex      int
	text, thinking string
	calls          []session.ToolCall
	stored         bool
	results        []session.ToolResult
}

// of returns the session's step and the position it reflects.
func (p *remoteProgress) of(id string) (stepView, events.Position) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.steps[id]
	if !ok || s.local {
		return stepView{}, p.pos
	}
	return stepView{ok: true, turnIndex: s.turnIndex, text: s.text.String(), thinking: s.thinking.String(),
		calls: s.calls.snapshot(), stored: s.stored, results: append([]session.ToolResult(nil), s.results...)}, p.pos
}

// inProgress is the view's step in flight for a session of turns stored
// turns, as the local one reads (see actor.inProgress).
func (s stepView) inProgress(turns int) *InProgress {
	switch {
	case s.ok && !s.stored && s.turnIndex >= turns:
		return &InProgress{TurnIndex: s.turnIndex, Text: s.text, Thinking: s.thinking, ToolCalls: s.calls}
	case s.ok && s.turnIndex == turns-1:
		// The model's turn is stored; its calls run.
		return &InProgress{TurnIndex: turns, Results: s.results}
	}
	return &InProgress{TurnIndex: turns}
}

// reset forgets every step: what follows starts at pos.
func (p *remoteProgress) reset(pos events.Position) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pos = pos
	p.steps = map[string]*remoteStep{}
}

// take folds one event of the hub in; local says whether this server
// runs the event's session, asked only when a step begins.
func (p *remoteProgress) take(ev *agentsv1.Event, local func(string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The hub's position after ev. A logged event carries its seq only:
	// the hub's delta counter is where the last delta left it (or where
	// it was at reset), and the position must keep it, so that it places
	// the deltas folded so far. A bare seq would not, on a hub that
	// relays, and a client subscribing after it would get no delta until
	// the session's next logged event (see events.Hub.SubscribeAt). That
	// happens whenever the holder's first deltas are relayed here before
	// the logged events that came before them reach this server.
	pos := events.PositionOf(ev)
	if pos.Delta == 0 {
		pos.Delta = p.pos.Delta
	}
	p.pos = pos
	id := ev.GetSessionId()
	s := p.steps[id]
	switch body := ev.GetBody().(type) {
	case *agentsv1.Event_TextDelta:
		if s = p.stepAt(id, s, int(body.TextDelta.GetTurnIndex()), local); !s.local {
			s.text.WriteString(body.TextDelta.GetText())
		}
	case *agentsv1.Event_ThinkingDelta:
		if s = p.stepAt(id, s, int(body.ThinkingDelta.GetTurnIndex()), local); !s.local {
			s.thinking.WriteString(body.ThinkingDelta.GetText())
		}
	case *agentsv1.Event_ToolCallDelta:
		d := body.ToolCallDelta
		if s = p.stepAt(id, s, int(d.GetTurnIndex()), local); !s.local {
			s.calls.add(int(d.GetCallIndex()), d.GetCallId(), d.GetName(), d.GetArguments())
		}
	case *agentsv1.Event_SessionUpdated:
		if s == nil {
			return
		}
		switch n := int(body.SessionUpdated.GetMeta().GetTurnCount()); {
		case n > s.turnIndex+1:
			delete(p.steps, id) // the round's results are stored too
		case n == s.turnIndex+1:
			s.stored = true
		}
	case *agentsv1.Event_ToolCompleted:
		if s != nil && s.stored && !s.local {
			s.results = append(s.results, toolResultOf(body.ToolCompleted.GetResult()))
		}
	case *agentsv1.Event_RunStopped, *agentsv1.Event_SessionFailed, *agentsv1.Event_SessionDeleted:
		delete(p.steps, id)
	}
}

// stepAt returns the step of session id at the turn index a delta is
// of: s, the one kept, or a new one when s is of another turn or its
// turn is stored (the delta begins the next step). Called under p.mu.
func (p *remoteProgress) stepAt(id string, s *remoteStep, index int, local func(string) bool) *remoteStep {
	if s != nil && s.turnIndex == index && !s.stored {
		return s
	}
	if len(p.steps) >= maxRemoteSteps && s == nil {
		for other := range p.steps {
			delete(p.steps, other)
			break
		}
	}
	s = &remoteStep{turnIndex: index, local: local(id)}
	p.steps[id] = s
	return s
}

// resultStatusOf reads a streamed result's status back.
func resultStatusOf(s agentsv1.ToolResultStatus) session.ResultStatus {
	switch s {
	case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR:
		return session.ResultError
	case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_CANCELLED:
		return session.ResultCancelled
	case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ABORTED:
		return session.ResultAborted
	}
	return session.ResultOK
}

func toolResultOf(r *agentsv1.ToolResult) session.ToolResult {
	return session.ToolResult{
		CallID:         r.GetCallId(),
		Name:           r.GetName(),
		Text:           r.GetText(),
		Status:         resultStatusOf(r.GetStatus()),
		ChildSessionID: r.GetChildSessionId(),
		Duration:       r.GetDuration().AsDuration(),
	}
}

// followProgress feeds remoteProgress from the hub until the runner
// closes. It also drops from the watch index the sessions deleted by
// other servers, whose deletes reach this server only as events, and
// wakes the scheduler when a schedule changed.
func (r *Runner) followProgress() {
	local := func(id string) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		_, ok := r.live[id]
		return ok
	}
	for r.ctx.Err() == nil {
		r.others.reset(r.hub.Position())
		sub, _ := r.hub.Subscribe(events.AllScope(), nil)
		r.follow(sub, local)
		sub.Close()
		select {
		case <-r.ctx.Done():
		case <-time.After(100 * time.Millisecond):
			// Cut for lagging, or the hub shut down: a moment before
			// following again.
		}
	}
}

func (r *Runner) follow(sub *events.Subscription, local func(string) bool) {
	for {
		select {
		case <-r.ctx.Done():
			return
		case ev, ok := <-sub.C():
			if !ok {
				return
			}
			r.others.take(ev, local)
			switch ev.GetKind() {
			case events.KindSessionDeleted:
				r.watches.drop(ev.GetSessionId())
			case events.KindScheduleChanged:
				r.wakeScheduler()
			}
		}
	}
}

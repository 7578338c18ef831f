package runner

import (
	"context"
	"sync"

	"github.com/agents-os/agents/backend/internal/session"
)

// What the runner holds in memory beside the store, and the one rule for
// it. The store is the truth; memory is either a copy of it or what the
// store never holds.
//
//   - A copy of stored state is built from the store when the session is
//     loaded, and only then: restore, from what load read. That is the
//     session's meta, turns, pending mail and deferred calls, and the
//     round that waits for clients, with the resume a client asked for
//     (stored with its answer), and where the session stood for its
//     parent (see notePhase). A session is loaded on first use after
//     it was evicted and after a restart alike, so both see the same
//     state. While the session is loaded the actor changes the copy as
//     the store takes each change (see apply), never before: a write the
//     store refuses leaves it as it was. The one exception is the end of
//     a run, which cannot fail: while the store refuses it, the write is
//     kept (see writestate.go) and memory already says the status it
//     writes (see settle). What only memory holds of stored state is
//     what an eviction or a restart loses.
//   - What the store never holds is kept by the runner beside the actors,
//     for the session's life in this process: evictions keep it, a
//     restart loses it, a deletion drops it. That is the session's params
//     (secrets a client supplies), and the run limits' queue of sessions
//     whose mail waits for a free run (see slots), which Recover builds
//     again after a restart from the sessions with pending mail.
//   - With servers sharing the database, the copy is the truth only
//     while this server holds the session (see placement.Hold): load
//     reads it only once the hold is taken, and a session whose hold is
//     lost is unloaded without writing (see lease.go), so a hold taken
//     again reads the store again. Mail another server stores for a
//     session held here is taken in when that server says so
//     (refreshMail), and the watches of a target are read when a hold
//     that takes it up is taken.

// restore makes st, just read from the store (or just created), the
// actor's session, with what the runner kept of it: its params, and a
// narrowed helper's child's bound params, which are stored with its first
// turn; and the round that waits for clients, from the rows load read.
func (a *actor) restore(st *state) {
	a.st = st
	a.agent, _ = a.r.agentFor(a.r.ctx, st.meta, 0)
	a.owner = st.meta.Owner
	a.params = a.r.params.of(a.id)
	if n := session.NarrowingOf(st.turns); n != nil && len(n.Params) > 0 {
		a.params = a.r.params.merge(a.id, n.Params)
	}
	a.waiting = a.roundFromRows(st.round)
	st.round = nil
	a.phase = phaseUnknown
	if st.meta.ParentID != "" {
		a.phase = a.phaseNow()
	}
}

// newestRound reads the rows of the calls of a session's newest model
// turn: the round that may wait for clients. Without calls there is none
// to read.
func (r *Runner) newestRound(ctx context.Context, st *state) ([]session.DeferredCall, error) {
	n := len(st.turns)
	if n == 0 || st.turns[n-1].LLM == nil || len(st.turns[n-1].LLM.ToolCalls) == 0 {
		return nil, nil
	}
	return r.store.DeferredRound(ctx, st.meta.ID, n-1)
}

// roundFromRows rebuilds the round of the newest model turn from its
// stored rows; nil when it has none (its calls did not wait for clients).
// Its calls have no tool yet: launch finds it, in the session's toolset,
// when one runs. It resumes when an answer stored with it asked so, when
// it was approved (an approval always resumes), or when no client tool's
// call in it asks a client.
func (a *actor) roundFromRows(rows []session.DeferredCall) *step {
	if len(rows) == 0 {
		return nil
	}
	n := len(a.st.turns)
	byCall := map[string]session.DeferredCall{}
	for _, r := range rows {
		byCall[r.Call.ID] = r
	}
	st := &step{ctx: context.Background(), cancel: func() {}, turnIndex: n - 1, recorded: true}
	asksClient := false
	for _, call := range a.st.turns[n-1].LLM.ToolCalls {
		row := byCall[call.ID]
		st.calls = append(st.calls, &callState{call: call, token: row.Token, result: row.Result, stored: row.Result != nil,
			approval: row.Reason == reasonApproval || row.Reason == reasonApproved, approved: row.Reason == reasonApproved})
		if row.Resume || row.Reason == reasonApproved {
			st.resume = true
		}
		asksClient = asksClient || row.Reason == reasonClientTool
	}
	if !asksClient {
		// No client is asked whether the round goes on (it was stored
		// for approvals, or for helpers' children that wait): it goes
		// on once every call has its result.
		st.resume = true
	}
	return st
}

// sessionParams keeps each session's params for as long as the session
// lives in this process, evictions included: params are secrets a client
// supplies, never stored, so an idle session must not lose them. A session
// deleted takes its params with it; a restart loses them all, and runs
// that need them wait for a client to supply them again.
type sessionParams struct {
	mu   sync.Mutex
	byID map[string]map[string]string
}

// of returns a session's params, nil when it has none: a session no
// client gave params costs no entry. Only the session's actor reads or
// writes the map it gets, and only merge changes it.
func (p *sessionParams) of(id string) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byID[id]
}

// merge adds values to a session's params and returns them.
func (p *sessionParams) merge(id string, values map[string]string) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID == nil {
		p.byID = map[string]map[string]string{}
	}
	m, ok := p.byID[id]
	if !ok {
		m = map[string]string{}
		p.byID[id] = m
	}
	for k, v := range values {
		m[k] = v
	}
	return m
}

// forget drops a deleted session's params.
func (p *sessionParams) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.byID, id)
}

package pages

import agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"

// Refresh tracks a listing in flight for a screen kept live by events:
// the answer may predate events that arrived meanwhile, so those are kept
// to be applied again over it; and when listings overlap, only the newest
// answer counts, since an older one may lack what an event since showed.
type Refresh struct {
	generation int
	loading    bool
	since      []*agentsv1.Event
}

// Start begins a listing and returns its generation, for its answer.
func (r *Refresh) Start() int {
	r.generation++
	r.loading, r.since = true, nil
	return r.generation
}

// Seen records an event applied while a listing is in flight.
func (r *Refresh) Seen(ev *agentsv1.Event) {
	if r.loading {
		r.since = append(r.since, ev)
	}
}

// Done takes the answer of generation: ok is false for a stale one, to
// be ignored; otherwise replay is the events to apply over it.
func (r *Refresh) Done(generation int) (replay []*agentsv1.Event, ok bool) {
	if generation != r.generation {
		return nil, false
	}
	replay = r.since
	r.loading, r.since = false, nil
	return replay, true
}

// Loading reports a listing in flight.
func (r *Refresh) Loading() bool { return r.loading }

package server

import (
	"context"
	"net/http"
	"net/url"
)

// requestState is what the layers of one request keep about it: the
// record of its log line, the caller's identity, the session a JSON
// route's answer holds, its parsed query, and the writers the layers wrap
// the response in. It is put in the request's context once, by the
// outermost layer there is, and each layer fills in its part: a layer
// that put a value of its own in the context would copy the request for
// it, and a prompt's two requests went through four such copies each.
// All its fields are written on the request's goroutine.
type requestState struct {
	record requestRecord
	// recorded says the request layer (logRequests) writes the request's
	// line: without it (an in-process client's request, whose calls log
	// their own lines) record is not read.
	recorded bool
	// id is the caller, once hasID (see serveAs).
	id    identity
	hasID bool
	// slot is where a JSON route that asked for it (slotted) gets the
	// session its answer holds (sessionFor).
	slot    sessionSlot
	slotted bool
	// query is rawQuery parsed (see queryOf).
	query    url.Values
	rawQuery string
	// status and rewriter are the response writers of logRequests and
	// jsonErrors.
	status   statusWriter
	rewriter errorRewriter
}

type requestStateKey struct{}

// stateOf returns the state of ctx's request, nil when it has none.
func stateOf(ctx context.Context) *requestState {
	st, _ := ctx.Value(requestStateKey{}).(*requestState)
	return st
}

// withState returns the request's state, giving r one if it has none
// (a layer reached without the outer ones: a test's handler, say).
func withState(r *http.Request) (*requestState, *http.Request) {
	if st := stateOf(r.Context()); st != nil {
		return st, r
	}
	st := &requestState{}
	return st, r.WithContext(context.WithValue(r.Context(), requestStateKey{}, st))
}

// queryOf is r.URL.Query(), parsed once per request: the route's check
// (checkRequest) and its handler both read it. The caller must not
// change it.
func queryOf(r *http.Request) url.Values {
	st := stateOf(r.Context())
	if st == nil {
		return r.URL.Query()
	}
	if st.query == nil || st.rawQuery != r.URL.RawQuery {
		st.query, st.rawQuery = r.URL.Query(), r.URL.RawQuery
	}
	return st.query
}

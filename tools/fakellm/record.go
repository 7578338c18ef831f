package fakellm

import (
	"context"
	"slices"
)

// Requests returns the chat requests received since the server started or
// was last Reset, in arrival order. Requests the server rejected as
// malformed (400) are not among them.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// WaitRequests waits until at least n requests are recorded and returns
// them all, or returns ctx's error. It lets a test follow a run that calls
// the model in the background without sleeping.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	for {
		s.mu.Lock()
		if len(s.requests) >= n {
			requests := slices.Clone(s.requests)
			s.mu.Unlock()
			return requests, nil
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		}
	}
}

// Reset forgets the recorded requests and starts over: request indexes,
// rule Times and generated call ids count from zero again.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
	s.received = 0
	clear(s.ruleUses)
	s.callsIssued = 0
	s.notify()
}

// record appends req; s.mu must be held.
func (s *Server) record(req Request) {
	s.requests = append(s.requests, req)
	s.notify()
}

// notify wakes every WaitRequests; s.mu must be held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

package sse

import (
	"github.com/agents-os/agents/backend/internal/events"
)

// ParseAfter returns the position a subscription resumes from, given the
// Last-Event-ID header and the after query parameter; nil means live only.
// The header wins: a browser's EventSource reconnects with the URL it first
// used, so the header is the newer of the two. A position is "seq" or
// "seq.delta", as the frames' ids are.
func ParseAfter(lastEventID, after string) (*events.Position, error) {
	raw := lastEventID
	if raw == "" {
		raw = after
	}
	if raw == "" {
		return nil, nil
	}
	p, err := events.ParsePosition(raw)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

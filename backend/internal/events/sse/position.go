package sse

import (
	"strings"

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

// ParseKinds returns the kinds the kinds query parameters name: each a
// comma-separated list, spaces around a name ignored, empty names
// skipped. None means every kind; whether a name is a kind is the hub's
// to say (events.Scope.OfKinds).
func ParseKinds(params []string) []string {
	var kinds []string
	for _, p := range params {
		for k := range strings.SplitSeq(p, ",") {
			if k = strings.TrimSpace(k); k != "" {
				kinds = append(kinds, k)
			}
		}
	}
	return kinds
}

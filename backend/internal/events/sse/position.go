package sse

import (
	"errors"
	"fmt"
	"strconv"
)

// ParseSeq parses an event position: a decimal uint64, nothing else (no
// sign, no spaces, no other base).
func ParseSeq(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("invalid event position: empty, want a decimal sequence number")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid event position %q: want a decimal sequence number up to %d", s, uint64(1<<64-1))
	}
	return n, nil
}

// ParseAfter returns the position a subscription resumes from, given the
// Last-Event-ID header and the after query parameter; nil means live only.
// The header wins: a browser's EventSource reconnects with the URL it first
// used, so the header is the newer of the two.
func ParseAfter(lastEventID, after string) (*uint64, error) {
	raw := lastEventID
	if raw == "" {
		raw = after
	}
	if raw == "" {
		return nil, nil
	}
	n, err := ParseSeq(raw)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

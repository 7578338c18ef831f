package events

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Position is a place in the order of events. Seq is the event log's
// position: every logged event has its own, and they keep their meaning
// across restarts. Text and thinking deltas are not logged: a delta
// carries the Seq of the newest logged event and its own Delta, a counter
// of this process, so (Seq, Delta) orders every event and a logged event
// is (Seq, 0).
type Position struct {
	Seq   uint64
	Delta uint64
}

// Before reports whether p comes before q.
func (p Position) Before(q Position) bool {
	return p.Seq < q.Seq || (p.Seq == q.Seq && p.Delta < q.Delta)
}

// String renders the position as an SSE id: "seq" for a logged event,
// "seq.delta" for a delta.
func (p Position) String() string {
	if p.Delta == 0 {
		return strconv.FormatUint(p.Seq, 10)
	}
	return strconv.FormatUint(p.Seq, 10) + "." + strconv.FormatUint(p.Delta, 10)
}

// ParsePosition reads what String writes: "seq" or "seq.delta", decimal.
func ParsePosition(s string) (Position, error) {
	if s == "" {
		return Position{}, errors.New("invalid event position: empty, want seq or seq.delta")
	}
	head, tail, hasDelta := strings.Cut(s, ".")
	seq, err := parseDecimal(head)
	if err != nil {
		return Position{}, fmt.Errorf("invalid event position %q: want seq or seq.delta, decimal", s)
	}
	p := Position{Seq: seq}
	if hasDelta {
		if p.Delta, err = parseDecimal(tail); err != nil {
			return Position{}, fmt.Errorf("invalid event position %q: want seq or seq.delta, decimal", s)
		}
	}
	return p, nil
}

func parseDecimal(s string) (uint64, error) {
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, errors.New("not a decimal")
	}
	return strconv.ParseUint(s, 10, 64)
}

// PositionOf returns an event's position.
func PositionOf(ev *agentsv1.Event) Position {
	return Position{Seq: ev.GetSeq(), Delta: ev.GetDeltaSeq()}
}

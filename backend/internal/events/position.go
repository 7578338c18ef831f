package events

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Position is a place in the order of events. Seq is the event log's
// position: every logged event has its own, and they keep their meaning
// across restarts and on every server. Deltas (of text, thinking, tool
// calls) are not logged: a delta carries the Seq of the newest logged event the hub had
// and its own Delta, numbered by the hub that published it, so (Seq,
// Delta) orders every event of one hub and a logged event is (Seq, 0).
//
// A delta's number means something only to the hub that gave it, and
// hubs are many: one per server, and a new one at each restart. So Delta
// names its hub: its high bits are the hub's tag, drawn when the hub is
// made, and its low counterBits bits the hub's counter. A position of
// another hub (tag not this hub's, or none: one an older server wrote)
// places the logged events, never this hub's deltas (see SubscribeAt).
// Packing the tag into Delta keeps the wire as it was (delta_seq is one
// number, which clients hand back as they got it) and costs the hot path
// nothing: the counter starts at the tag.
type Position struct {
	Seq   uint64
	Delta uint64
}

// A Delta's low counterBits bits count the hub's deltas and the tagBits
// above them are its tag: together 53 bits, so a delta_seq is a JSON
// number every client reads exactly (JavaScript's numbers are exact up
// to 2^53). 2^33 deltas (8.6 billion) are years of a busy server's; a
// counter that ran out would carry into the tag, which keeps the hub's
// order and only makes its older positions another hub's.
const (
	counterBits = 33
	tagBits     = 20
	counterMask = 1<<counterBits - 1
	// maxTag bounds the tags drawn, half of the 2^20 that fit, so a
	// carry never overflows.
	maxTag = 1 << (tagBits - 1)
)

// lastTag is the tag of the hub made last in this process: the first is
// drawn at random and each next hub takes the one after, so the hubs of
// one process never share a tag and those of two servers almost never
// (one chance in 2^19 for two given ones).
var lastTag atomic.Uint64

func init() { lastTag.Store(rand.Uint64N(maxTag)) }

// newTag returns the tag of a new hub, never 0 (the tag of none).
func newTag() uint64 { return lastTag.Add(1)%(maxTag-1) + 1 }

// tag returns the tag of the hub that numbered p's delta, 0 for a logged
// event's position or one without a tag.
func (p Position) tag() uint64 { return p.Delta >> counterBits }

// Before reports whether p comes before q.
func (p Position) Before(q Position) bool {
	return p.Seq < q.Seq || (p.Seq == q.Seq && p.Delta < q.Delta)
}

// String renders the position as an SSE id: "seq" for a logged event,
// "seq.delta.tag" for a delta, its counter and its hub's tag apart (the
// tag in base 36), and "seq.delta" for a position without a tag.
func (p Position) String() string {
	seq := strconv.FormatUint(p.Seq, 10)
	switch tag := p.tag(); {
	case p.Delta == 0:
		return seq
	case tag == 0:
		return seq + "." + strconv.FormatUint(p.Delta, 10)
	default:
		return seq + "." + strconv.FormatUint(p.Delta&counterMask, 10) + "." + strconv.FormatUint(tag, 36)
	}
}

const positionForm = "want seq, seq.delta or seq.delta.tag (decimal, the tag in base 36)"

// ParsePosition reads what String writes: "seq", "seq.delta" or
// "seq.delta.tag". "seq.delta" is also how an older server wrote a delta,
// and how a client writes an event's seq and delta_seq as it got them.
func ParsePosition(s string) (Position, error) {
	if s == "" {
		return Position{}, errors.New("invalid event position: empty, " + positionForm)
	}
	bad := func() (Position, error) {
		return Position{}, fmt.Errorf("invalid event position %q: %s", s, positionForm)
	}
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return bad()
	}
	var p Position
	var err error
	if p.Seq, err = parseUint(parts[0], 10); err != nil {
		return bad()
	}
	if len(parts) > 1 {
		if p.Delta, err = parseUint(parts[1], 10); err != nil {
			return bad()
		}
	}
	if len(parts) > 2 {
		tag, err := parseUint(parts[2], 36)
		if err != nil || tag == 0 || tag >= 1<<tagBits || p.Delta > counterMask {
			return bad()
		}
		p.Delta |= tag << counterBits
	}
	return p, nil
}

func parseUint(s string, base int) (uint64, error) {
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, errors.New("not a number")
	}
	return strconv.ParseUint(s, base, 64)
}

// PositionOf returns an event's position.
func PositionOf(ev *agentsv1.Event) Position {
	return Position{Seq: ev.GetSeq(), Delta: ev.GetDeltaSeq()}
}

package events

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// kindSet is a set of kinds, one bit per kind in the order of Kinds(), and
// one more for an event without a kind. A subscription's filter is one
// (see Scope.OfKinds), and so is what the hub's index offers a subscriber
// (see Subscription.visit): testing an event's bit against it is all a
// subscriber that wants none of the event's kind costs the fan-out.
type kindSet uint64

// everyKind is the set with every bit, the kindless one too.
const everyKind = ^kindSet(0)

// noKind is the bit of an event without a kind, which only an unfiltered
// subscription receives.
const noKind = kindSet(1) << 63

// kindBits maps each kind to its bit. It is made on first use: listing
// the kinds reflects over the event's protobuf types, which a server
// should not pay for at start-up.
var kindBits = sync.OnceValue(func() map[string]kindSet {
	kinds := Kinds()
	if len(kinds) >= 63 {
		panic("events: more kinds than a kindSet has bits")
	}
	bits := make(map[string]kindSet, len(kinds))
	for i, k := range kinds {
		bits[k] = 1 << i
	}
	return bits
})

// deltaSet holds the kinds published as deltas.
var deltaSet = sync.OnceValue(func() kindSet {
	var set kindSet
	bits := kindBits()
	for _, k := range deltaKinds {
		set |= bits[k]
	}
	return set
})

// bitOf returns the bit of ev's kind: the kind it carries, which is its
// SSE frame's name, and which WithKind makes its body's.
func bitOf(ev *agentsv1.Event) kindSet {
	if bit, ok := kindBits()[ev.GetKind()]; ok {
		return bit
	}
	return noKind
}

// ErrUnknownKind is Scope.OfKinds's answer to a name that is no kind.
var ErrUnknownKind = errors.New("unknown event kind")

// kindSetOf returns the set of kinds; the names must be known kinds.
func kindSetOf(kinds []string) (kindSet, error) {
	var set kindSet
	for _, k := range kinds {
		bit, ok := kindBits()[k]
		if !ok {
			return 0, fmt.Errorf("%w %q: the kinds are %s", ErrUnknownKind, k, strings.Join(Kinds(), ", "))
		}
		set |= bit
	}
	return set, nil
}

// names lists the kinds of the set, in the order of Kinds().
func (k kindSet) names() []string {
	var out []string
	for _, name := range Kinds() {
		if k&kindBits()[name] != 0 {
			out = append(out, name)
		}
	}
	return out
}

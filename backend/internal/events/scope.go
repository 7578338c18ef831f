package events

import (
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// scopeKind says which of the three scopes a Scope is. The zero value is
// deliberately no scope at all, so a forgotten Scope matches nothing rather
// than everything.
type scopeKind uint8

const (
	scopeNone scopeKind = iota
	scopeSession
	scopeOwner
	scopeAll
)

// Scope selects the events a subscription receives. Build one with
// SessionScope, OwnerScope or AllScope; the zero Scope matches no event. The
// hub does not check permissions: the server decides who may use AllScope.
type Scope struct {
	kind scopeKind
	id   string
	// kinds, when not empty, narrows the scope to those kinds of event
	// (see OfKinds); empty is every kind.
	kinds kindSet
}

// SessionScope matches the events of one session, including the subcall
// events stamped with it. An empty id matches nothing.
func SessionScope(sessionID string) Scope { return Scope{kind: scopeSession, id: sessionID} }

// OwnerScope matches the events of every session of one owner, plus the
// server-wide events (those with neither session nor owner, such as
// agents.changed).
func OwnerScope(owner string) Scope { return Scope{kind: scopeOwner, id: owner} }

// AllScope matches every event.
func AllScope() Scope { return Scope{kind: scopeAll} }

// OfKinds narrows the scope to the events of the given kinds; none given
// leaves it as it is, every kind. A name that is no kind is refused with
// ErrUnknownKind, naming it and listing the kinds.
//
// Logged events and deltas of the kinds named arrive as they would
// unfiltered, in order, and a replay after a position gives every one of
// them after it: a subscriber resuming from the last event it received
// misses none of its kinds, whatever of the others came meanwhile. A
// filter without delta kinds never gets a snapshot for lack of deltas.
func (s Scope) OfKinds(kinds ...string) (Scope, error) {
	set, err := kindSetOf(kinds)
	if err != nil {
		return Scope{}, err
	}
	s.kinds = set
	return s, nil
}

// Matches reports whether ev belongs to the scope. The hub's subscriber index
// delivers exactly the events Matches accepts; this method is the reference
// for it.
func (s Scope) Matches(ev *agentsv1.Event) bool {
	return s.matches(ev.GetSessionId(), ev.GetOwner()) && s.wants(bitOf(ev))
}

// wants reports whether the scope's kinds hold the kind of bit.
func (s Scope) wants(bit kindSet) bool { return s.kinds == 0 || s.kinds&bit != 0 }

// wantsDeltas reports whether the scope takes any delta.
func (s Scope) wantsDeltas() bool { return s.wants(deltaSet()) }

// matches is Matches, kinds aside, for an event of session and owner.
func (s Scope) matches(session, owner string) bool {
	switch s.kind {
	case scopeSession:
		return s.id != "" && session == s.id
	case scopeOwner:
		if s.id != "" && owner == s.id {
			return true
		}
		return session == "" && owner == ""
	case scopeAll:
		return true
	default:
		return false
	}
}

// String renders the scope for logs: "session:ID", "owner:NAME", "all" or
// "none", and its kinds when it has some ("all kinds=run.stopped").
func (s Scope) String() string {
	if s.kinds != 0 {
		return s.where() + " kinds=" + strings.Join(s.kinds.names(), ",")
	}
	return s.where()
}

// where is String without the kinds.
func (s Scope) where() string {
	switch s.kind {
	case scopeSession:
		return "session:" + s.id
	case scopeOwner:
		return "owner:" + s.id
	case scopeAll:
		return "all"
	default:
		return "none"
	}
}

// isServerWide reports whether ev concerns no session and no owner; every
// owner's subscribers receive such events.
func isServerWide(ev *agentsv1.Event) bool {
	return ev.GetSessionId() == "" && ev.GetOwner() == ""
}

// Session returns the session of a session scope.
func (s Scope) Session() (string, bool) { return s.id, s.kind == scopeSession }

// IsAll reports whether the scope matches every event.
func (s Scope) IsAll() bool { return s.kind == scopeAll }

// Owner returns the owner of an owner scope.
func (s Scope) Owner() (string, bool) { return s.id, s.kind == scopeOwner }

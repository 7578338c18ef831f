package events

import agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"

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

// Matches reports whether ev belongs to the scope. The hub's subscriber index
// delivers exactly the events Matches accepts; this method is the reference
// for it.
func (s Scope) Matches(ev *agentsv1.Event) bool {
	return s.matches(ev.GetSessionId(), ev.GetOwner())
}

// matches is Matches for an event of session and owner.
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
// "none".
func (s Scope) String() string {
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

package events

// losses remembers, for each session and each owner, the newest delta the
// delta ring pushed out, so a replay can tell whether the ring still holds
// every delta its scope matches after a position.
//
// The delta ring is one for the whole process, shared by every session:
// one budget bounds the memory deltas take however many sessions stream at
// once, and a delta only matters while its turn is in progress (GetSession
// returns the turn so far, so a snapshot costs a client one read). The
// price is that one session's burst pushes out another's deltas; the ring's
// floor alone would then refuse every replay after it, even of a session
// that lost nothing, and ignoring the loss would give a replay with a hole
// in the text. So each loss is kept against the scopes it matters to.
//
// The maps are bounded by max entries each (as many as the ring has
// entries). When one is full, both are cleared and forgot takes the
// newest loss: every scope may have lost deltas up to it, so positions
// before it get a snapshot, and no replay is ever wrong. Not safe for
// concurrent use; the hub's mutex guards it.
type losses struct {
	sessions map[string]Position
	// owners is keyed by owner; "" holds the server-wide deltas (no
	// session, no owner), which every owner scope matches.
	owners map[string]Position
	newest Position
	forgot Position
	max    int
}

func newLosses(max int) losses {
	return losses{sessions: map[string]Position{}, owners: map[string]Position{}, max: max}
}

// add records the delta at p, of session and owner, as lost. Deltas are
// pushed out in position order, but a deleted session's are dropped
// while older ones are still held (ring.forget): each loss keeps the
// newest position it was given.
func (l *losses) add(session, owner string, p Position) {
	if len(l.sessions) >= l.max || len(l.owners) >= l.max {
		clear(l.sessions)
		clear(l.owners)
		l.forgot = l.newest
	}
	l.newest = later(l.newest, p)
	if session != "" {
		l.sessions[session] = later(l.sessions[session], p)
	}
	if owner != "" || session == "" {
		l.owners[owner] = later(l.owners[owner], p)
	}
}

// reset forgets every loss: at a start, nothing of this process was lost
// (the deltas of the process before it ended with its turns).
func (l *losses) reset() {
	clear(l.sessions)
	clear(l.owners)
	l.newest, l.forgot = Position{}, Position{}
}

// holds reports whether no delta that scope matches was lost after p.
func (l *losses) holds(scope Scope, p Position) bool {
	lost := l.forgot
	switch scope.kind {
	case scopeAll:
		lost = l.newest
	case scopeSession:
		lost = later(lost, l.sessions[scope.id])
	case scopeOwner:
		lost = later(later(lost, l.owners[scope.id]), l.owners[""])
	default:
		return true // matches nothing
	}
	return !p.Before(lost)
}

func later(p, q Position) Position {
	if p.Before(q) {
		return q
	}
	return p
}

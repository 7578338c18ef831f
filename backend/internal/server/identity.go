package server

import "context"

// LocalOwner is the owner every request acts as when auth is off.
const LocalOwner = "local"

// identity is who a request acts as.
type identity struct {
	owner string
	admin bool
}

// identityOf is the caller of ctx's request (set by serveAs).
func identityOf(ctx context.Context) identity {
	if st := stateOf(ctx); st != nil && st.hasID {
		return st.id
	}
	// Without auth there is one local user, who may see everything.
	return identity{owner: LocalOwner, admin: true}
}

// owner is the caller's owner.
func owner(ctx context.Context) string { return identityOf(ctx).owner }

// isAdmin reports whether the caller may act on every owner's sessions.
func isAdmin(ctx context.Context) bool { return identityOf(ctx).admin }

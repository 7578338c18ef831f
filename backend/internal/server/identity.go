package server

import "context"

// LocalOwner is the owner every request acts as when auth is off.
const LocalOwner = "local"

// identity is who a request acts as.
type identity struct {
	owner string
	admin bool
}

type identityKey struct{}

// withIdentity returns ctx carrying the caller's identity.
func withIdentity(ctx context.Context, id identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

func identityOf(ctx context.Context) identity {
	if id, ok := ctx.Value(identityKey{}).(identity); ok {
		return id
	}
	// Without auth there is one local user, who may see everything.
	return identity{owner: LocalOwner, admin: true}
}

// owner is the caller's owner.
func owner(ctx context.Context) string { return identityOf(ctx).owner }

// isAdmin reports whether the caller may act on every owner's sessions.
func isAdmin(ctx context.Context) bool { return identityOf(ctx).admin }

package runner

import "context"

// StoredAgentsChanged tells the other servers sharing the database that
// a stored agent changed, so that they read the stored agents again; the
// caller already did (sessions here take the change from their next
// step). Without other servers it does nothing.
func (r *Runner) StoredAgentsChanged(ctx context.Context) error {
	return r.place.StoredAgentsChanged(ctx)
}

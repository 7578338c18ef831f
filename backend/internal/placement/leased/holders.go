package leased

import (
	"sync"
	"time"

	"github.com/agents-os/agents/backend/internal/store"
)

// remoteHolders remembers, for a moment, the leases other servers were
// found holding, so that a session's requests to a server that does not
// hold it (every other one, behind a proxy that spreads them) do not each
// read its lease. A remembered lease is a hint, as the read one is: a
// read of a session held elsewhere is answered from the store either
// way, and a command sent to a holder that let the session go meanwhile
// is found by the next chase (commandPoll). A release the servers are
// told of (ChannelLeases) is forgotten at once.
type remoteHolders struct {
	mu     sync.Mutex
	leases map[string]rememberedLease
}

type rememberedLease struct {
	lease store.Lease
	until time.Time
}

// remoteHoldersFor is how long a lease held elsewhere is remembered, at
// most (never past its expiry).
const remoteHoldersFor = time.Second

// maxRemoteHolders bounds the leases remembered; past it, the ones no
// longer worth keeping are swept.
const maxRemoteHolders = 4096

func (h *remoteHolders) get(id string, now time.Time) (store.Lease, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rl, ok := h.leases[id]
	if !ok || !now.Before(rl.until) {
		return store.Lease{}, false
	}
	return rl.lease, true
}

func (h *remoteHolders) remember(l store.Lease, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.leases == nil {
		h.leases = map[string]rememberedLease{}
	}
	if len(h.leases) >= maxRemoteHolders {
		for id, rl := range h.leases {
			if !now.Before(rl.until) {
				delete(h.leases, id)
			}
		}
		if len(h.leases) >= maxRemoteHolders {
			clear(h.leases)
		}
	}
	until := now.Add(remoteHoldersFor)
	if l.Expires.Before(until) {
		until = l.Expires
	}
	h.leases[l.SessionID] = rememberedLease{lease: l, until: until}
}

func (h *remoteHolders) forget(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.leases, id)
}

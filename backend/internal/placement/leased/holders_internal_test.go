package leased

import (
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/store"
)

// A lease held elsewhere is remembered for remoteHoldersFor at most, never
// past its expiry, and forgotten when the servers are told it is given up.
func TestRemoteHoldersRememberALeaseForAMomentAtMost(t *testing.T) {
	var h remoteHolders
	now := time.Now()
	long := store.Lease{SessionID: "s", Holder: "a", Epoch: 1, Expires: now.Add(time.Minute)}
	h.remember(long, now)
	if l, ok := h.get("s", now.Add(remoteHoldersFor/2)); !ok || l != long {
		t.Fatalf("within the moment: %+v, %v; want the lease", l, ok)
	}
	if _, ok := h.get("s", now.Add(remoteHoldersFor)); ok {
		t.Error("remembered past remoteHoldersFor")
	}

	short := store.Lease{SessionID: "t", Holder: "a", Epoch: 1, Expires: now.Add(remoteHoldersFor / 4)}
	h.remember(short, now)
	if _, ok := h.get("t", now.Add(remoteHoldersFor/2)); ok {
		t.Error("remembered past the lease's expiry")
	}

	h.remember(long, now)
	h.forget("s")
	if _, ok := h.get("s", now); ok {
		t.Error("remembered after it was forgotten")
	}
}

package cluster

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
)

// testBus runs the contract every Bus keeps. servers returns n buses, one
// per server of one database (a MemoryBus: the same one n times).
func testBus(t *testing.T, servers func(t *testing.T, n int) []Bus) {
	t.Run("every server hears every notification in order", func(t *testing.T) {
		b := servers(t, 2)
		got := [2]*recorder{newRecorder(), newRecorder()}
		for i := range b {
			defer b[i].Listen(ChannelEvents, got[i].add)()
		}
		const n = 50
		for i := range n {
			if err := b[i%2].Notify(context.Background(), ChannelEvents, strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range b {
			p := got[i].wait(t, n)
			for j := range n {
				if p[j] != strconv.Itoa(j) {
					t.Fatalf("server %d heard %v, want 0..%d in order", i, p, n-1)
				}
			}
		}
	})
	t.Run("a listener hears only its channel", func(t *testing.T) {
		b := servers(t, 1)
		mail, leases := newRecorder(), newRecorder()
		defer b[0].Listen(ChannelMail, mail.add)()
		defer b[0].Listen(ChannelLeases, leases.add)()
		ctx := context.Background()
		if err := b[0].Notify(ctx, ChannelMail, "s1"); err != nil {
			t.Fatal(err)
		}
		if err := b[0].Notify(ctx, ChannelLeases, "s2"); err != nil {
			t.Fatal(err)
		}
		if p := mail.wait(t, 1); p[0] != "s1" {
			t.Fatalf("mail heard %v", p)
		}
		if p := leases.wait(t, 1); p[0] != "s2" {
			t.Fatalf("leases heard %v", p)
		}
		time.Sleep(50 * time.Millisecond)
		if n := len(mail.all()) + len(leases.all()); n != 2 {
			t.Fatalf("heard %d notifications, want 2", n)
		}
	})
	t.Run("cancel stops a listener", func(t *testing.T) {
		b := servers(t, 1)
		stopped, kept := newRecorder(), newRecorder()
		cancel := b[0].Listen(ChannelCommands, stopped.add)
		defer b[0].Listen(ChannelCommands, kept.add)()
		ctx := context.Background()
		if err := b[0].Notify(ctx, ChannelCommands, "before"); err != nil {
			t.Fatal(err)
		}
		stopped.wait(t, 1)
		cancel()
		if err := b[0].Notify(ctx, ChannelCommands, "after"); err != nil {
			t.Fatal(err)
		}
		kept.wait(t, 2)
		if p := stopped.all(); len(p) != 1 {
			t.Fatalf("a cancelled listener heard %v", p)
		}
	})
	t.Run("a payload of MaxPayload bytes is refused", func(t *testing.T) {
		b := servers(t, 1)
		got := newRecorder()
		defer b[0].Listen(ChannelDeltas, got.add)()
		ctx := context.Background()
		err := b[0].Notify(ctx, ChannelDeltas, strings.Repeat("x", MaxPayload))
		if errs.KindOf(err) != errs.KindTooLarge {
			t.Fatalf("Notify of %d bytes: %v, want too large", MaxPayload, err)
		}
		big := strings.Repeat("y", MaxPayload-1)
		if err := b[0].Notify(ctx, ChannelDeltas, big); err != nil {
			t.Fatalf("Notify of %d bytes: %v", len(big), err)
		}
		if p := got.wait(t, 1); p[0] != big {
			t.Fatalf("heard %d bytes, want %d", len(p[0]), len(big))
		}
	})
	t.Run("a closed bus refuses to notify", func(t *testing.T) {
		b := servers(t, 1)
		if err := b[0].Close(); err != nil {
			t.Fatal(err)
		}
		if err := b[0].Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if err := b[0].Notify(context.Background(), ChannelEvents, "1"); !errors.Is(err, ErrClosed) {
			t.Fatalf("Notify after Close: %v, want ErrClosed", err)
		}
	})
}

// recorder keeps what a listener heard.
type recorder struct {
	mu      sync.Mutex
	heard   []string
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) add(p string) {
	r.mu.Lock()
	r.heard = append(r.heard, p)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.heard...)
}

// wait returns what was heard once there are at least n.
func (r *recorder) wait(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if p := r.all(); len(p) >= n {
			return p
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("heard %d notifications after 10s, want %d", len(r.all()), n)
		}
	}
}

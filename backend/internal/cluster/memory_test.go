package cluster

import (
	"context"
	"testing"
)

func TestMemoryBus(t *testing.T) {
	t.Parallel()
	testBus(t, func(t *testing.T, n int) []Bus {
		b := NewMemoryBus()
		t.Cleanup(func() { b.Close() })
		out := make([]Bus, n)
		for i := range out {
			out[i] = b
		}
		return out
	})
}

func TestMemoryBusReconnectComesAfterEarlierNotifications(t *testing.T) {
	t.Parallel()
	b := NewMemoryBus()
	defer b.Close()
	got := newRecorder()
	defer b.Listen(ChannelEvents, got.add)()
	b.OnReconnect(func() { got.add("reconnected") })
	if err := b.Notify(context.Background(), ChannelEvents, "1"); err != nil {
		t.Fatal(err)
	}
	b.Reconnect()
	if p := got.wait(t, 2); p[0] != "1" || p[1] != "reconnected" {
		t.Fatalf("heard %v", p)
	}
}

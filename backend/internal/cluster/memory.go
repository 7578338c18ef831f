package cluster

import (
	"context"
	"sync"
	"sync/atomic"
)

// MemoryBus is a Bus inside one process: the servers of a test share one,
// and every listener hears every notification, as on PostgreSQL. It
// delivers on one goroutine of its own, in the order of Notify.
type MemoryBus struct {
	mu        sync.Mutex
	listeners map[string][]*listener
	reconnect []func()
	// queue holds what the goroutine has yet to deliver; wake tells it
	// there is some.
	queue  []func()
	wake   chan struct{}
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

var _ Bus = (*MemoryBus)(nil)

type listener struct {
	fn        func(string)
	cancelled atomic.Bool
}

// NewMemoryBus starts a bus in memory. Close stops it.
func NewMemoryBus() *MemoryBus {
	b := &MemoryBus{
		listeners: map[string][]*listener{},
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	go b.loop()
	return b
}

// Notify implements Bus.
func (b *MemoryBus) Notify(_ context.Context, channel, payload string) error {
	if err := checkPayload(channel, payload); err != nil {
		return err
	}
	return b.enqueue(func() {
		b.mu.Lock()
		ls := b.listeners[channel]
		b.mu.Unlock()
		for _, l := range ls {
			if !l.cancelled.Load() {
				l.fn(payload)
			}
		}
	})
}

// Listen implements Bus. A call to fn already under way when cancel is
// called still ends.
func (b *MemoryBus) Listen(channel string, fn func(payload string)) (cancel func()) {
	l := &listener{fn: fn}
	b.mu.Lock()
	b.listeners[channel] = append(b.listeners[channel], l)
	b.mu.Unlock()
	return func() {
		l.cancelled.Store(true)
		b.mu.Lock()
		defer b.mu.Unlock()
		ls := b.listeners[channel]
		for i, x := range ls {
			if x == l {
				// A new slice: the goroutine may be ranging over the old.
				b.listeners[channel] = append(ls[:i:i], ls[i+1:]...)
				break
			}
		}
	}
}

// OnReconnect implements Bus. A MemoryBus never loses its connection;
// Reconnect makes it behave as if it had.
func (b *MemoryBus) OnReconnect(fn func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reconnect = append(b.reconnect, fn)
}

// Reconnect calls the OnReconnect functions on the bus's goroutine, after
// the notifications sent before it, as a bus does that got its connection
// back. Tests use it to see that listeners re-read.
func (b *MemoryBus) Reconnect() {
	_ = b.enqueue(func() {
		b.mu.Lock()
		fns := b.reconnect
		b.mu.Unlock()
		for _, fn := range fns {
			fn()
		}
	})
}

// Close implements Bus: what is not delivered yet is dropped. It must not
// be called from a listener.
func (b *MemoryBus) Close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.stop)
	}
	b.mu.Unlock()
	<-b.done
	return nil
}

func (b *MemoryBus) enqueue(deliver func()) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	b.queue = append(b.queue, deliver)
	select {
	case b.wake <- struct{}{}:
	default:
	}
	return nil
}

func (b *MemoryBus) loop() {
	defer close(b.done)
	for {
		select {
		case <-b.stop:
			return
		case <-b.wake:
		}
		b.mu.Lock()
		q := b.queue
		b.queue = nil
		b.mu.Unlock()
		for _, deliver := range q {
			select {
			case <-b.stop:
				return
			default:
			}
			deliver()
		}
	}
}

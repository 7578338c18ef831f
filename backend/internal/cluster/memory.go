package cluster

import (
	"context"
	"errors"
	"sync"
)

// MemoryBus is a Bus inside one process, for tests of several runners on
// one store. Notifications are delivered in order on one goroutine.
type MemoryBus struct {
	mu        sync.Mutex
	wake      *sync.Cond
	queue     []note
	listeners map[string]map[int]func(string)
	next      int
	closed    bool
	done      chan struct{}
}

type note struct{ channel, payload string }

var _ Bus = (*MemoryBus)(nil)

// NewMemoryBus returns a bus; Close stops its goroutine.
func NewMemoryBus() *MemoryBus {
	b := &MemoryBus{listeners: map[string]map[int]func(string){}, done: make(chan struct{})}
	b.wake = sync.NewCond(&b.mu)
	go b.deliver()
	return b
}

// ErrClosed is Notify's answer once the bus is closed.
var ErrClosed = errors.New("cluster: bus closed")

// Notify implements Bus.
func (b *MemoryBus) Notify(_ context.Context, channel, payload string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	b.queue = append(b.queue, note{channel, payload})
	b.wake.Signal()
	return nil
}

// Listen implements Bus.
func (b *MemoryBus) Listen(channel string, fn func(string)) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.listeners[channel] == nil {
		b.listeners[channel] = map[int]func(string){}
	}
	b.next++
	id := b.next
	b.listeners[channel][id] = fn
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.listeners[channel], id)
	}
}

// OnReconnect implements Bus: a memory bus never loses its connection.
func (b *MemoryBus) OnReconnect(func()) {}

// Close implements Bus.
func (b *MemoryBus) Close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		b.wake.Signal()
	}
	b.mu.Unlock()
	<-b.done
	return nil
}

func (b *MemoryBus) deliver() {
	defer close(b.done)
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		for len(b.queue) == 0 && !b.closed {
			b.wake.Wait()
		}
		if b.closed {
			return
		}
		n := b.queue[0]
		b.queue = b.queue[1:]
		var fns []func(string)
		for _, fn := range b.listeners[n.channel] {
			fns = append(fns, fn)
		}
		b.mu.Unlock()
		for _, fn := range fns {
			fn(n.payload)
		}
		b.mu.Lock()
	}
}

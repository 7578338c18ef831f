package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PGBus is a Bus over PostgreSQL's LISTEN/NOTIFY. It listens on a
// connection of its own, which it reconnects with a backoff when it is
// lost (then calls the OnReconnect functions), and notifies through a
// small pool of other connections, so a Notify never waits behind the
// listener.
type PGBus struct {
	cfg  *pgx.ConnConfig
	pool *pgxpool.Pool
	log  *slog.Logger

	mu       sync.Mutex
	channels map[string]*pgChannel
	// connected says the listener has a connection; Listen waits for
	// LISTEN only then.
	connected bool
	// interrupt ends the listener's current wait, so it LISTENs on a
	// channel Listen just added; nil while it is not waiting.
	interrupt func()
	reconnect []func()

	closed atomic.Bool
	cancel context.CancelFunc
	done   chan struct{}
}

var _ Bus = (*PGBus)(nil)

// pgChannel is a channel the bus was asked to listen on.
type pgChannel struct {
	listeners []*listener
	// listened says the listener connection LISTENs on it; ready, until
	// then, is closed once it does (or the connection is lost) and
	// releases the Listen calls waiting for it.
	listened bool
	ready    chan struct{}
}

// ListenerName is the application_name of the listener's connection.
const ListenerName = "agents notification bus"

// How the listener keeps its connection: it checks that the connection
// is alive after keepAlive without a notification, and reconnects after
// a loss waiting from minBackoff, doubling up to maxBackoff.
const (
	keepAlive   = 15 * time.Second
	pingTimeout = 5 * time.Second
	minBackoff  = 100 * time.Millisecond
	maxBackoff  = 5 * time.Second
)

// NewPGBus connects to the database at dsn and starts listening. It
// fails when the database cannot be reached now; once it is running it
// reconnects by itself. Close stops it.
func NewPGBus(ctx context.Context, dsn string, log *slog.Logger) (*PGBus, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("notification bus: %w", err)
	}
	// Named, so an operator tells the listener among the connections.
	cfg.RuntimeParams["application_name"] = ListenerName
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("notification bus: %w", err)
	}
	// Notifications are short statements; two connections keep one slow
	// round trip from holding up the others.
	pcfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("notification bus: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("notification bus: connect: %w", err)
	}
	run, cancel := context.WithCancel(context.Background())
	b := &PGBus{cfg: cfg, pool: pool, log: log, channels: map[string]*pgChannel{}, connected: true, cancel: cancel, done: make(chan struct{})}
	go b.run(run, conn)
	return b, nil
}

// Notify implements Bus.
func (b *PGBus) Notify(ctx context.Context, channel, payload string) error {
	if err := checkPayload(channel, payload); err != nil {
		return err
	}
	if b.closed.Load() {
		return ErrClosed
	}
	if _, err := b.pool.Exec(ctx, "SELECT pg_notify($1, $2)", channel, payload); err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	return nil
}

// Listen implements Bus. It returns once the connection LISTENs on
// channel, or once it was lost (its reconnect then calls OnReconnect's
// functions). So it must not be called from a listener or an OnReconnect
// function, which run on the goroutine it waits for. A channel stays
// listened to after its last listener is cancelled: the servers listen on
// a few fixed channels.
func (b *PGBus) Listen(channel string, fn func(payload string)) (cancel func()) {
	l := &listener{fn: fn}
	b.mu.Lock()
	c := b.channels[channel]
	if c == nil {
		c = &pgChannel{ready: make(chan struct{})}
		b.channels[channel] = c
		if b.interrupt != nil {
			b.interrupt()
		}
	}
	c.listeners = append(c.listeners, l)
	ready := c.ready
	if !b.connected {
		ready = nil
	}
	b.mu.Unlock()
	if ready != nil {
		select {
		case <-ready:
		case <-b.done:
		}
	}
	return func() {
		l.cancelled.Store(true)
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, x := range c.listeners {
			if x == l {
				// A new slice: the listener may be ranging over the old.
				c.listeners = append(c.listeners[:i:i], c.listeners[i+1:]...)
				break
			}
		}
	}
}

// OnReconnect implements Bus.
func (b *PGBus) OnReconnect(fn func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reconnect = append(b.reconnect, fn)
}

// Close implements Bus. It must not be called from a listener.
func (b *PGBus) Close() error {
	b.closed.Store(true)
	b.cancel()
	<-b.done
	b.pool.Close()
	return nil
}

// run listens on conn until it is lost, then connects again, until ctx
// ends.
func (b *PGBus) run(ctx context.Context, conn *pgx.Conn) {
	defer close(b.done)
	defer b.lost()
	reconnected := false
	for {
		err := b.listen(ctx, conn, reconnected)
		conn.Close(context.Background())
		b.lost()
		if ctx.Err() != nil {
			return
		}
		b.log.Warn("notification bus lost its connection; reconnecting", "err", err)
		if conn = b.connect(ctx); conn == nil {
			return
		}
		reconnected = true
	}
}

// connect connects again, with a backoff between tries, until it
// succeeds or ctx ends (then it returns nil).
func (b *PGBus) connect(ctx context.Context) *pgx.Conn {
	backoff := minBackoff
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		conn, err := pgx.ConnectConfig(ctx, b.cfg)
		if err == nil {
			b.mu.Lock()
			b.connected = true
			b.mu.Unlock()
			return conn
		}
		backoff = min(2*backoff, maxBackoff)
		b.log.Warn("notification bus cannot reconnect", "err", err, "retry_in", backoff)
	}
}

// listen LISTENs on the channels asked for and delivers what arrives
// until the connection fails or ctx ends. On a connection that replaces
// a lost one, it calls the OnReconnect functions once it LISTENs again.
func (b *PGBus) listen(ctx context.Context, conn *pgx.Conn, reconnected bool) error {
	if err := b.listenAll(ctx, conn); err != nil {
		return err
	}
	if reconnected {
		b.log.Info("notification bus reconnected")
		b.mu.Lock()
		fns := b.reconnect
		b.mu.Unlock()
		for _, fn := range fns {
			fn()
		}
	}
	for {
		wait, cancel := context.WithTimeout(ctx, keepAlive)
		b.mu.Lock()
		b.interrupt = cancel
		fresh := b.unlistened()
		b.mu.Unlock()
		if fresh {
			cancel() // a channel came after listenAll: LISTEN first
		}
		n, err := conn.WaitForNotification(wait)
		b.mu.Lock()
		b.interrupt = nil
		b.mu.Unlock()
		timedOut := errors.Is(wait.Err(), context.DeadlineExceeded)
		cancel()
		switch {
		case n != nil:
			b.deliver(n.Channel, n.Payload)
		case ctx.Err() != nil:
			return ctx.Err()
		case timedOut:
			// Quiet for a while: make sure the connection is alive.
			ping, cancel := context.WithTimeout(ctx, pingTimeout)
			err = conn.Ping(ping)
			cancel()
			if err != nil {
				return err
			}
		case err != nil && !errors.Is(err, context.Canceled):
			return err
		}
		if err := b.listenAll(ctx, conn); err != nil {
			return err
		}
	}
}

// unlistened says whether a channel waits for its LISTEN. Called under mu.
func (b *PGBus) unlistened() bool {
	for _, c := range b.channels {
		if !c.listened {
			return true
		}
	}
	return false
}

// listenAll LISTENs on conn on every channel not yet listened to, and
// releases the Listen calls that wait for them.
func (b *PGBus) listenAll(ctx context.Context, conn *pgx.Conn) error {
	for {
		b.mu.Lock()
		var name string
		for n, c := range b.channels {
			if !c.listened {
				name = n
				break
			}
		}
		b.mu.Unlock()
		if name == "" {
			return nil
		}
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("listen on %s: %w", name, err)
		}
		b.mu.Lock()
		c := b.channels[name]
		c.listened = true
		if c.ready != nil {
			close(c.ready)
			c.ready = nil
		}
		b.mu.Unlock()
	}
}

// lost marks every channel as not listened to, and releases the Listen
// calls waiting: the reconnect's OnReconnect covers what they miss.
func (b *PGBus) lost() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.connected = false
	for _, c := range b.channels {
		c.listened = false
		if c.ready != nil {
			close(c.ready)
			c.ready = nil
		}
	}
}

func (b *PGBus) deliver(channel, payload string) {
	b.mu.Lock()
	var ls []*listener
	if c := b.channels[channel]; c != nil {
		ls = c.listeners
	}
	b.mu.Unlock()
	for _, l := range ls {
		if !l.cancelled.Load() {
			l.fn(payload)
		}
	}
}

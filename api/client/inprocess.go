package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// inProcessTarget names a server served inside this process.
const inProcessTarget = "in-process"

// handlerGrace bounds how long Close waits for cancelled handlers.
const handlerGrace = 5 * time.Second

// InProcess returns a client of h served inside this process: an
// http.Server on an in-memory listener, so every call goes through the
// same HTTP and Connect layers as over a socket (streams and their
// flushes included) without a file or a port anyone else could reach.
// Close stops that server: once it returns, no handler of h is running
// (short of one that ignores its cancellation for handlerGrace).
func InProcess(h http.Handler) *Client {
	ln := newMemListener()
	g := &gate{next: h}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	transport := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return ln.dial(ctx) },
	}
	c := New(&http.Client{Transport: transport}, "http://"+inProcessTarget, "")
	c.Target = inProcessTarget
	c.OnClose(func() {
		// Closing every connection cancels the requests still open (the
		// event streams); the gate then waits for their handlers, for a
		// while: one that ignores its cancellation must not hang Close.
		_ = srv.Close()
		closed := make(chan struct{})
		go func() {
			g.close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(handlerGrace):
		}
	})
	return c
}

// gate passes requests to next until it is closed; close waits for the
// handlers still running, and later requests are refused.
type gate struct {
	next http.Handler
	// mu is held shared by each running handler and exclusively by
	// close, which so waits for them all.
	mu     sync.RWMutex
	closed bool
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		http.Error(w, errListenerClosed.Error(), http.StatusServiceUnavailable)
		return
	}
	g.next.ServeHTTP(w, r)
}

func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// memListener is a net.Listener whose connections are in-memory pipes
// made by dial.
type memListener struct {
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

var _ net.Listener = (*memListener)(nil)

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// errListenerClosed is what a closed in-process listener answers.
var errListenerClosed = errors.New("the in-process server is closed")

func (l *memListener) dial(ctx context.Context) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, errListenerClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

// memAddr is the address of both ends of an in-process connection.
type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return inProcessTarget }

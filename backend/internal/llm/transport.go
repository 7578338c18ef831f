package llm

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// maxIdleConnsPerHost is how many idle connections a client keeps to its
// endpoint: one per session streaming from it at once, up to a bound.
const maxIdleConnsPerHost = 256

// idleConnTimeout closes a connection to a model that no call used for
// this long (the default transport's is 90 s). Each idle connection
// keeps two goroutines and its buffers; a server that went quiet drops
// them within half a minute, and a busy one reuses them long before.
const idleConnTimeout = 30 * time.Second

// newTransport is http.DefaultTransport with a larger idle pool, whose
// connections close sooner when unused (idleConnTimeout), and whose plain
// TCP connections copy request bodies through pooled buffers
// (pooledCopyConn). The default keeps 2 idle connections per host, so
// with more sessions than that calling one endpoint at once, most calls
// would dial (and TLS handshake) a fresh connection and leave the old one
// in TIME_WAIT.
func newTransport() http.RoundTripper {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t := base.Clone()
	t.MaxIdleConns = max(t.MaxIdleConns, maxIdleConnsPerHost)
	t.MaxIdleConnsPerHost = maxIdleConnsPerHost
	t.IdleConnTimeout = idleConnTimeout
	if dial := t.DialContext; dial != nil {
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return pooledCopyConn{c}, nil
		}
	}
	return t
}

// pooledCopyConn is a connection whose ReadFrom copies through a pooled
// buffer. The transport hands a request body it cannot write whole into
// its own buffer to the connection's ReadFrom, wrapped in an
// io.LimitedReader that hides the body's WriteTo; a TCP connection's
// ReadFrom then allocates a buffer of up to 32 KiB for every request.
// Over TLS the transport wraps this connection in its own, and writes
// through Write alone.
type pooledCopyConn struct {
	net.Conn
}

// copyBuffers are the buffers pooledCopyConn copies through, as large as
// io.Copy's.
var copyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 32<<10)
	return &b
}}

// ReadFrom writes what r reads to the connection until r ends.
func (c pooledCopyConn) ReadFrom(r io.Reader) (int64, error) {
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	// Only the connection's Write: its own ReadFrom is what this avoids.
	return io.CopyBuffer(struct{ io.Writer }{c.Conn}, r, *buf)
}

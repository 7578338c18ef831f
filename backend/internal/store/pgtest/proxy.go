package pgtest

import (
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a PostgreSQL server, so that a test
// can break them as a network or a server does: all at once (Cut), or
// right after the server was sent a given message (a Hook), so the
// server acts on it and the client never hears; and it can refuse new
// ones for a while (Refuse), as a database that is away does.
type Proxy struct {
	dsn     string
	hook    func() Hook
	mu      sync.Mutex
	open    []net.Conn
	refused bool
}

// Message is one message a client sends once its connection started:
// its type byte and its body, as the frontend/backend protocol has them.
type Message struct {
	Type byte
	Body []byte
}

// Query is the text of a simple query ('Q'), lower-cased, with its
// trailing semicolon and spaces cut; "" for any other message. pgx sends
// BEGIN, COMMIT, ROLLBACK and statements without arguments as simple
// queries.
func (m Message) Query() string {
	if m.Type != 'Q' {
		return ""
	}
	return strings.ToLower(strings.TrimRight(string(m.Body), "\x00; \n\t"))
}

// Parsed is the statement name and the lower-cased text of a Parse ('P')
// message, which prepares a statement of the extended protocol; ok is
// false for any other message.
func (m Message) Parsed() (name, query string, ok bool) {
	if m.Type != 'P' {
		return "", "", false
	}
	name, rest, _ := strings.Cut(string(m.Body), "\x00")
	query, _, _ = strings.Cut(rest, "\x00")
	return name, strings.ToLower(query), true
}

// Bound is the statement name of a Bind ('B') message, which runs a
// statement a Parse prepared; ok is false for any other message.
func (m Message) Bound() (statement string, ok bool) {
	if m.Type != 'B' {
		return "", false
	}
	_, rest, _ := strings.Cut(string(m.Body), "\x00") // the portal
	statement, _, _ = strings.Cut(rest, "\x00")
	return statement, true
}

// A Hook sees each message the client of one connection sends, before
// the proxy forwards it, and says what becomes of the connection.
type Hook func(Message) Verdict

// Verdict is what a Hook makes of a message.
type Verdict int

const (
	// Forward sends the message on.
	Forward Verdict = iota
	// CutThis sends the message on and cuts its connection once the
	// server answered: the server acted on it (a COMMIT committed), and
	// the client never hears so.
	CutThis
	// CutAll is CutThis, and the proxy's other connections are cut at
	// the same moment.
	CutAll
)

// NewProxy starts a proxy in front of the server of dsn, until the test
// ends. hook, when not nil, makes the Hook of each new connection.
func NewProxy(t testing.TB, dsn string, hook func() Hook) *Proxy {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.Host = ln.Addr().String()
	p := &Proxy{dsn: u.String(), hook: hook}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			refused := p.refused
			p.mu.Unlock()
			if refused {
				client.Close()
				continue
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			p.mu.Lock()
			p.open = append(p.open, client, server)
			p.mu.Unlock()
			c := &proxied{proxy: p, client: client, server: server}
			if p.hook != nil {
				c.hook = p.hook()
			}
			wg.Go(c.replies)
			wg.Go(c.requests)
		}
	})
	return p
}

// DSN is the URL that reaches the database through the proxy.
func (p *Proxy) DSN() string { return p.dsn }

// Cut closes every connection the proxy carries, as a network failure
// that the client sees as its connection ending does.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.open {
		c.Close()
	}
	p.open = nil
}

// Refuse makes the proxy close the connections it is asked for at once
// (on), or take them again (off).
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused = on
}

// proxied is one connection the proxy carries.
type proxied struct {
	proxy          *Proxy
	client, server net.Conn
	hook           Hook
	mu             sync.Mutex
	// cut is the verdict that ends the connection, once given.
	cut Verdict
}

// replies copies what the server sends to the client until the server's
// side ends or the hook cut the connection; then both sides go.
func (c *proxied) replies() {
	defer c.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.server.Read(buf)
		v := c.verdict()
		if v == CutAll {
			c.proxy.Cut()
		}
		if err != nil || v != Forward {
			return
		}
		if _, err := c.client.Write(buf[:n]); err != nil {
			return
		}
	}
}

// requests copies what the client sends to the server: the startup
// message (after an SSL or GSS request, which the server refuses with
// one byte), then messages of a type byte and a length that counts
// itself, each shown to the hook first. After a message the hook cuts,
// both sides are left to replies, which closes them once the server
// answered it: by then the server acted on it.
func (c *proxied) requests() {
	for {
		startup, err := c.readUntyped()
		if err == nil {
			_, err = c.server.Write(startup)
		}
		if err != nil {
			c.close()
			return
		}
		if code := binary.BigEndian.Uint32(startup[4:8]); code != sslRequest && code != gssRequest {
			break
		}
	}
	var head [5]byte
	for {
		if _, err := io.ReadFull(c.client, head[:]); err != nil {
			c.close()
			return
		}
		body := make([]byte, int(binary.BigEndian.Uint32(head[1:]))-4)
		if _, err := io.ReadFull(c.client, body); err != nil {
			c.close()
			return
		}
		if v := c.hookOn(Message{Type: head[0], Body: body}); v != Forward {
			c.mu.Lock()
			c.cut = v
			c.mu.Unlock()
			_, _ = c.server.Write(append(head[:], body...))
			return
		}
		if _, err := c.server.Write(append(head[:], body...)); err != nil {
			c.close()
			return
		}
	}
}

// The codes of the requests a client may send before its startup
// message.
const (
	sslRequest = 80877103
	gssRequest = 80877104
)

// readUntyped reads a message without a type byte (the startup message
// and the requests before it): a length that counts itself, then the
// rest.
func (c *proxied) readUntyped() ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(c.client, n[:]); err != nil {
		return nil, err
	}
	msg := make([]byte, binary.BigEndian.Uint32(n[:]))
	if len(msg) < 8 {
		return nil, io.ErrUnexpectedEOF
	}
	copy(msg, n[:])
	if _, err := io.ReadFull(c.client, msg[4:]); err != nil {
		return nil, err
	}
	return msg, nil
}

func (c *proxied) hookOn(m Message) Verdict {
	if c.hook == nil {
		return Forward
	}
	return c.hook(m)
}

func (c *proxied) verdict() Verdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut
}

// close ends both sides; the server, seeing its client gone, rolls back
// whatever the client had not committed.
func (c *proxied) close() {
	c.client.Close()
	c.server.Close()
}

// AppendTracker follows the messages of one connection and tells whether
// the transaction under way appended events: whether it ran a statement
// prepared from an INSERT into the events table. A proxy's hook uses it
// to act on the COMMIT of such a transaction.
type AppendTracker struct {
	appends  map[string]bool // the connection's statements that append events
	appended bool
}

// NewAppendTracker returns a tracker for a connection that has sent
// nothing yet.
func NewAppendTracker() *AppendTracker { return &AppendTracker{appends: map[string]bool{}} }

// See follows m; COMMIT and ROLLBACK (simple queries, as pgx sends them)
// end the transaction.
func (a *AppendTracker) See(m Message) {
	if name, query, ok := m.Parsed(); ok {
		a.appends[name] = strings.HasPrefix(query, "insert into events")
	}
	if name, ok := m.Bound(); ok && a.appends[name] {
		a.appended = true
	}
	if q := m.Query(); q == "commit" || q == "rollback" {
		a.appended = false
	}
}

// Appended says the transaction under way appended events.
func (a *AppendTracker) Appended() bool { return a.appended }

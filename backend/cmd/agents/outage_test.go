//go:build unix

package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// dbProxy stands between the servers and PostgreSQL, so a test can take
// the database away from them (cut) and give it back (restore) without
// touching the PostgreSQL server the other tests share.
type dbProxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

// startDBProxy forwards a local port to the host of dsn and returns the
// proxy with dsn rewritten to go through it.
func startDBProxy(t *testing.T, dsn string) (*dbProxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dbProxy{target: u.Host, addr: ln.Addr().String(), conns: map[net.Conn]bool{}}
	p.serve(ln)
	t.Cleanup(p.cut)
	u.Host = p.addr
	return p, u.String()
}

func (p *dbProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *dbProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
}

// track records a connection pair, or closes it when the proxy was cut
// meanwhile.
func (p *dbProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

// cut closes every connection and refuses new ones: to the servers, the
// database is gone.
func (p *dbProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// restore takes connections again, on the same address.
func (p *dbProxy) restore(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

const outageAnswer = "an answer the model finished while the database was away"

// TestADatabaseOutageAnswersStoreUnavailableAndTheRunGoesOnWhenItReturns
// takes PostgreSQL away from a server while a run streams its answer:
// /readyz fails, a write is answered 503 store_unavailable, and once the
// database is back the server is ready again and the run stores its
// answer, once.
func TestADatabaseOutageAnswersStoreUnavailableAndTheRunGoesOnWhenItReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process on PostgreSQL")
	}
	t.Parallel()
	proxy, dsn := startDBProxy(t, pgtest.DSN(t))
	model := fakellmtest.Start(t, fakellm.Rules{
		Rules: []fakellm.Rule{{Name: "answer", Match: fakellm.Match{SystemContains: slowPrompt}, Reply: fakellm.Reply{
			Text: outageAnswer, ChunkSize: 4, ChunkDelay: "100ms",
		}}},
		Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
	})
	// A lease that outlives the outage: the run keeps its answer in
	// memory meanwhile, rather than hand the session over.
	srv := startCluster(t, 1, dsn, model.URL(), "--lease-ttl", "1m")[0]
	if status, body := getReadyz(t, srv.url); status != http.StatusOK {
		t.Fatalf("/readyz before the outage = %d %s, want 200", status, body)
	}

	feed := openEvents(t, srv.url)
	id := srv.create(t, "slow", "answer through the outage")
	feed.waitFor(t, "the first delta", func(ev *agentsv1.Event) bool {
		return ev.GetSessionId() == id && ev.GetKind() == "text.delta"
	})
	proxy.cut()

	status, body := getReadyz(t, srv.url)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "store unreachable") {
		t.Errorf("/readyz during the outage = %d %s, want 503 saying the store is unreachable", status, body)
	}
	status, body = postJSONStatus(t, srv.url+"/v1/sessions", `{"agent": "slow", "message": {"text": "during the outage"}}`)
	var e struct{ Code, Reason string }
	_ = json.Unmarshal([]byte(body), &e)
	if status != http.StatusServiceUnavailable || e.Code != "unavailable" || e.Reason != "store_unavailable" {
		t.Errorf("create during the outage = %d %s, want 503 unavailable store_unavailable", status, body)
	}
	// The model's answer is complete by now, and waits for the database.
	time.Sleep(2 * time.Second)

	proxy.restore(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body = getReadyz(t, srv.url)
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz 30s after the database came back = %d %s, want 200", status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	s := srv.waitIdle(t, id)
	if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("status after the outage = %v (%s), want ready", got, s.GetMeta().GetStatusReason())
	}
	if got := llmTexts(s); len(got) != 1 || got[0] != outageAnswer {
		t.Errorf("answers after the outage = %q, want the one the model gave, once", got)
	}
	if got := userTexts(s); len(got) != 1 {
		t.Errorf("user messages after the outage = %q, want one", got)
	}
	if n := countRule(model.Requests(), "answer"); n != 1 {
		t.Errorf("the model was asked %d times, want once: the answer waited for the database", n)
	}
}

func getReadyz(t *testing.T, base string) (int, string) {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func postJSONStatus(t *testing.T, url, body string) (int, string) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

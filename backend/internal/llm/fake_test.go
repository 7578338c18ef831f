package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ending is what the fake provider does once a reply's events are written.
type ending int

const (
	endClose      ending = iota // finish the response normally
	endAbort                    // drop the connection mid-body
	endHang                     // go silent until the client leaves
	endHangBefore               // go silent before sending any header
	endHijack                   // close the connection before any byte
)

// reply is one scripted answer of the fake provider.
type reply struct {
	status int // 200 when zero
	header map[string]string
	body   string   // written as is (error bodies, whole completions)
	events []string // SSE data payloads, each flushed on its own
	done   bool     // end the events with data: [DONE]
	end    ending
	// pause is waited before the header and before each event: a provider
	// that is slow but never silent for that long.
	pause time.Duration
	// forever, when set, is written as is after the events, again and
	// again (after each pause) until the client leaves: a provider that
	// never stops talking.
	forever string
}

type recordedRequest struct {
	header http.Header
	body   map[string]any
}

// fakeProvider is a chat-completions endpoint that answers each request
// with the next scripted reply and records what it was sent.
type fakeProvider struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	replies  []reply
	requests []recordedRequest

	// left hears once from each reply with forever whose client hung up.
	left chan struct{}
}

func newFakeProvider(t *testing.T, replies ...reply) *fakeProvider {
	t.Helper()
	f := &fakeProvider{t: t, replies: replies, left: make(chan struct{}, len(replies))}
	f.srv = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) url() string { return f.srv.URL + "/v1" }

func (f *fakeProvider) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		f.t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("read request body: %v", err)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("request body is not JSON: %v\n%s", err, raw)
	}

	f.mu.Lock()
	f.requests = append(f.requests, recordedRequest{header: r.Header.Clone(), body: body})
	if len(f.replies) == 0 {
		f.mu.Unlock()
		f.t.Errorf("request %d has no scripted reply", len(f.requests))
		http.Error(w, "no reply scripted", http.StatusTeapot)
		return
	}
	rep := f.replies[0]
	f.replies = f.replies[1:]
	f.mu.Unlock()

	f.write(w, r, rep)
}

func (f *fakeProvider) write(w http.ResponseWriter, r *http.Request, rep reply) {
	switch rep.end {
	case endHangBefore:
		waitForClientToLeave(r)
		return
	case endHijack:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			f.t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
		return
	}

	time.Sleep(rep.pause)
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.events != nil && w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	status := rep.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	io.WriteString(w, rep.body)
	flush(w)
	for _, e := range rep.events {
		time.Sleep(rep.pause)
		fmt.Fprintf(w, "data: %s\n\n", e)
		flush(w)
	}
	if rep.done {
		io.WriteString(w, "data: [DONE]\n\n")
		flush(w)
	}

	if rep.forever != "" {
		f.talkUntilClientLeaves(w, r, rep)
		return
	}

	switch rep.end {
	case endAbort:
		panic(http.ErrAbortHandler)
	case endHang:
		waitForClientToLeave(r)
	}
}

// talkUntilClientLeaves writes rep.forever until a write fails or the
// request ends, which is how the server sees the client close the
// connection, then reports on f.left.
func (f *fakeProvider) talkUntilClientLeaves(w http.ResponseWriter, r *http.Request, rep reply) {
	rc := http.NewResponseController(w)
	for r.Context().Err() == nil {
		time.Sleep(rep.pause)
		if _, err := io.WriteString(w, rep.forever); err != nil {
			break
		}
		if err := rc.Flush(); err != nil {
			break
		}
	}
	f.left <- struct{}{}
}

// clientLeft waits for the client of a reply with forever to hang up; the
// bound only keeps a client that never does from hanging the test binary.
func (f *fakeProvider) clientLeft() bool {
	select {
	case <-f.left:
		return true
	case <-time.After(20 * time.Second):
		return false
	}
}

// flush sends what was written. It fails only once the client has hung
// up, which tests of a client that gives up mean it to do.
func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}

// waitForClientToLeave blocks until the client gives up on the request; the
// bound only keeps a broken client from hanging the test binary.
func waitForClientToLeave(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(30 * time.Second):
	}
}

func (f *fakeProvider) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeProvider) request(i int) recordedRequest {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.requests) {
		f.t.Fatalf("request %d was never made (%d made)", i, len(f.requests))
	}
	return f.requests[i]
}

// testClient is a client of fake whose waits between attempts are recorded
// instead of spent.
func testClient(t *testing.T, baseURL string, flavor Flavor, tune ...func(*Config)) (*Client, *[]time.Duration) {
	t.Helper()
	cfg := Config{
		BaseURL:     baseURL,
		APIKey:      "sk-test-secret",
		Flavor:      flavor,
		BackoffBase: time.Millisecond,
		MaxDelay:    time.Minute,
	}
	for _, f := range tune {
		f(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return c, &waits
}

// collect gathers the deltas a Stream call hands out.
type collect struct {
	deltas []Delta
}

func (c *collect) add(d Delta) { c.deltas = append(c.deltas, d) }

func (c *collect) text() string {
	var b strings.Builder
	for _, d := range c.deltas {
		b.WriteString(d.Text)
	}
	return b.String()
}

func (c *collect) thinking() string {
	var b strings.Builder
	for _, d := range c.deltas {
		b.WriteString(d.Thinking)
	}
	return b.String()
}

// lookup walks decoded JSON along a dotted path of keys and list indexes.
func lookup(v any, path string) (any, bool) {
	for _, key := range strings.Split(path, ".") {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			v = node[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func basicRequest() Request {
	return Request{
		Model:     "test-model",
		Messages:  []Message{SystemMessage("be brief"), UserMessage("hi")},
		SessionID: "sess-1",
	}
}

package fakellm_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// failsafe bounds waits for things that must happen promptly. It only ends
// a broken test; nothing asserts how long anything took.
const failsafe = time.Minute

// observedServer serves rules and tells when a request arrives and when
// its handler returns.
type observedServer struct {
	url      string
	arrived  chan struct{}
	returned chan struct{}
}

func startObserved(t *testing.T, reply fakellm.Reply) *observedServer {
	t.Helper()
	o := &observedServer{arrived: make(chan struct{}, 1), returned: make(chan struct{}, 1)}
	srv := fakellm.New(fakellm.Rules{Rules: []fakellm.Rule{{Reply: reply}}},
		fakellm.OnRequest(func(fakellm.Request) { o.arrived <- struct{}{} }))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { o.returned <- struct{}{} }()
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		// Close waits for handlers; a handler that ignores cancellation
		// must fail the test, not hang it.
		closed := make(chan struct{})
		go func() {
			hs.CloseClientConnections()
			hs.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(failsafe):
			t.Error("a handler is still running after its connection closed")
		}
	})
	o.url = hs.URL + "/v1/chat/completions"
	return o
}

func (o *observedServer) request(ctx context.Context, t *testing.T, stream bool) *http.Request {
	t.Helper()
	payload := `{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": false}`
	if stream {
		payload = strings.Replace(payload, `"stream": false`, `"stream": true`, 1)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func (o *observedServer) waitFor(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(failsafe):
		t.Fatalf("%s did not happen", what)
	}
}

// TestInitialDelayStopsWhenTheClientLeaves: with an hour-long initial delay,
// the client gives up; the handler must notice and return.
func TestInitialDelayStopsWhenTheClientLeaves(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "non-streaming", true: "streaming"}[stream], func(t *testing.T) {
			t.Parallel()
			o := startObserved(t, fakellm.Reply{InitialDelay: "1h", Text: "too late"})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			result := make(chan error, 1)
			go func() {
				resp, err := http.DefaultClient.Do(o.request(ctx, t, stream))
				if err == nil {
					resp.Body.Close()
				}
				result <- err
			}()
			o.waitFor(t, o.arrived, "the request's arrival")
			cancel()
			select {
			case err := <-result:
				// Had the delay been skipped, the answer would have come.
				if !errors.Is(err, context.Canceled) {
					t.Errorf("client got %v, want the cancellation (no answer during the delay)", err)
				}
			case <-time.After(failsafe):
				t.Fatal("client still waiting after cancelling")
			}
			o.waitFor(t, o.returned, "the handler's return")
		})
	}
}

// TestChunkDelayStopsWhenTheClientLeaves: the first chunk comes at once, the
// next only after an hour; the client cancels in between.
func TestChunkDelayStopsWhenTheClientLeaves(t *testing.T) {
	t.Parallel()
	o := startObserved(t, fakellm.Reply{ChunkDelay: "1h", Text: "abcdefghijkl", ChunkSize: 4})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp, err := http.DefaultClient.Do(o.request(ctx, t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"role":"assistant"`) {
		t.Fatalf("first line = %q, want the role chunk", lines.Text())
	}
	cancel()
	for lines.Scan() {
		if line := lines.Text(); line != "" {
			t.Errorf("got %q after cancelling, want nothing (the next chunk is an hour away)", line)
		}
	}
	if lines.Err() == nil {
		t.Error("stream ended cleanly, want it cut by the cancellation")
	}
	o.waitFor(t, o.returned, "the handler's return")
}

func TestDisconnectAfterChunks(t *testing.T) {
	t.Parallel()
	srv := fakellmtest.Start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Reply: fakellm.Reply{Text: "abcdefghijklmnop", ChunkSize: 4, DisconnectAfterChunks: 3}},
	}})

	t.Run("streaming", func(t *testing.T) {
		b := userBody("hi")
		b["stream"] = true
		resp := post(t, t.Context(), srv, b)
		s := readStream(t, resp.Body)
		if s.done || s.finishReason != "" {
			t.Errorf("stream finished (done=%t finish=%q), want it cut", s.done, s.finishReason)
		}
		if len(s.chunks) != 3 || s.text != "abcdefgh" {
			t.Errorf("got %d chunks with text %q, want 3: the role and two text chunks", len(s.chunks), s.text)
		}
		if s.err == nil {
			t.Error("no read error, want the dropped connection")
		}
	})

	t.Run("non-streaming", func(t *testing.T) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/chat/completions",
			strings.NewReader(`{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("got status %d, want the connection dropped", resp.StatusCode)
		}
	})
}

package llm

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Many sessions stream from one endpoint at once; a client must keep an
// idle connection for each, or most calls dial a new one.
func TestDefaultClientKeepsConnectionsForConcurrentCalls(t *testing.T) {
	t.Parallel()
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := c.http.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T, want *http.Transport", c.http.Transport)
	}
	if tr.MaxIdleConnsPerHost < 64 || tr.MaxIdleConns < tr.MaxIdleConnsPerHost {
		t.Errorf("idle connections: %d per host, %d in all; want at least 64 per host", tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
	}
	if tr.Proxy == nil {
		t.Error("the transport ignores proxy settings from the environment")
	}
}

// The default transport sends small bodies from one slice and larger ones
// from their pieces through its connections' pooled copy; over plain HTTP,
// HTTP/1.1 over TLS and HTTP/2, every body arrives whole, on connections
// the calls reuse.
func TestDefaultTransportSendsBodiesOfEverySize(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"http", "https/1.1", "https/2"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var bodies [][]byte
			protos := map[string]bool{}
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, err := io.ReadAll(r.Body)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				bodies = append(bodies, body)
				protos[r.Proto] = true
				mu.Unlock()
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Content-Length", strconv.Itoa(len(benchStream)))
				_, _ = io.WriteString(w, benchStream)
			}))
			tr := newTransport().(*http.Transport)
			switch proto {
			case "http":
				srv.Start()
			default:
				srv.EnableHTTP2 = proto == "https/2"
				srv.StartTLS()
				tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
				if proto == "https/1.1" {
					tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
					tr.ForceAttemptHTTP2 = false
					tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
				}
			}
			t.Cleanup(srv.Close)
			t.Cleanup(tr.CloseIdleConnections)
			c, err := New(Config{BaseURL: srv.URL + "/v1", HTTPClient: &http.Client{Transport: tr}})
			if err != nil {
				t.Fatal(err)
			}
			var want [][]byte
			for _, n := range []int{1, 20, 100, 2000} {
				msgs := []Message{SystemMessage("system")}
				for i := range n {
					msgs = append(msgs, UserMessage(fmt.Sprintf("prompt %d %s", i, strings.Repeat("é", i%7))))
				}
				req := Request{Model: "m", Messages: msgs}
				body, err := encodeRequest(c.dialect, req, true)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, body.bytes())
				resp, err := c.Stream(context.Background(), req, nil)
				if err != nil || resp.Text != "Done." {
					t.Fatalf("%d messages: %+v, %v", n, resp, err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(bodies) != len(want) {
				t.Fatalf("server got %d requests, want %d", len(bodies), len(want))
			}
			for i := range want {
				if !bytes.Equal(bodies[i], want[i]) {
					t.Errorf("request %d: body of %d bytes differs from the %d sent", i, len(bodies[i]), len(want[i]))
				}
			}
			wantProto := map[string]string{"http": "HTTP/1.1", "https/1.1": "HTTP/1.1", "https/2": "HTTP/2.0"}[proto]
			if len(protos) != 1 || !protos[wantProto] {
				t.Errorf("protocols %v, want %s", protos, wantProto)
			}
		})
	}
}

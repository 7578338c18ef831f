package llm

import (
	"net/http"
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

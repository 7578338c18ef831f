// Package fakellmtest runs a fakellm server for the length of a test.
package fakellmtest

import (
	"net/http/httptest"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

// Server is a fakellm.Server listening on a local port; its methods
// (Requests, WaitRequests, Reset) are the embedded server's.
type Server struct {
	*fakellm.Server
	http *httptest.Server
}

// Start serves rules on a local port until the test ends. Invalid rules
// fail the test.
func Start(t testing.TB, rules fakellm.Rules, opts ...fakellm.Option) *Server {
	t.Helper()
	if err := rules.Validate(); err != nil {
		t.Fatal(err)
	}
	s := &Server{Server: fakellm.New(rules, opts...)}
	s.http = httptest.NewServer(s.Server)
	t.Cleanup(func() {
		// Dropping the connections first cancels streams a test left
		// unread, which Close would otherwise wait for.
		s.http.CloseClientConnections()
		s.http.Close()
	})
	return s
}

// StartFile is Start with rules loaded from a file.
func StartFile(t testing.TB, path string, opts ...fakellm.Option) *Server {
	t.Helper()
	rules, err := fakellm.LoadRules(path)
	if err != nil {
		t.Fatal(err)
	}
	return Start(t, rules, opts...)
}

// URL is the OpenAI base URL to give a client, such as
// "http://127.0.0.1:40123/v1".
func (s *Server) URL() string {
	return s.http.URL + "/v1"
}

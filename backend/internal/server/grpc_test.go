package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/server"
)

// h2c serves the env's handler over HTTP/1.1 and cleartext HTTP/2, as
// serve does, and returns its URL and a client that speaks HTTP/2 to it:
// what gRPC needs.
func (e *env) h2c() (string, *http.Client) {
	e.t.Helper()
	srv := httptest.NewUnstartedServer(e.srv.Handler())
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	e.t.Cleanup(srv.Close)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &p}}
	e.t.Cleanup(client.CloseIdleConnections)
	return srv.URL, client
}

// bearerOption sends token as the bearer token of every call.
func bearerOption(token string) connect.ClientOption {
	return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			return next(ctx, req)
		}
	}))
}

// TestAuthFailsInEachProtocolsOwnTerms: without a valid token, a gRPC
// or gRPC-Web call is answered with the protocol's own unauthenticated
// status (grpc-status 16, HTTP 200) and the server's message and machine
// code (an ErrorDetail), which grpcurl and buf curl print as such, not an
// HTTP 401 with a JSON body they read as a transport failure; Connect
// keeps its JSON error with 401, whose reason field a Connect client does
// not read.
func TestAuthFailsInEachProtocolsOwnTerms(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript(), withSecurity(server.Security{Tokens: testTokens(t)}))
	url, client := e.h2c()
	for _, tc := range []struct {
		name     string
		protocol []connect.ClientOption
	}{
		{"gRPC", []connect.ClientOption{connect.WithGRPC()}},
		{"gRPC-Web", []connect.ClientOption{connect.WithGRPCWeb()}},
		{"Connect", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				name, token, reason, message string
			}{
				{"no token", "", "token_required", "a bearer token is required"},
				{"a wrong token", "not-a-token-at-all-000", "invalid_token", "the bearer token is not valid"},
			} {
				opts := tc.protocol
				if c.token != "" {
					opts = append(slices.Clip(opts), bearerOption(c.token))
				}
				agents := agentsv1connect.NewAgentServiceClient(client, url, opts...)
				_, err := agents.ListAgents(ctxFor(t), connect.NewRequest(&agentsv1.ListAgentsRequest{}))
				var ce *connect.Error
				if tc.name == "Connect" {
					c.reason = "" // its JSON error carries the reason beside the code
				}
				if !errors.As(err, &ce) || ce.Code() != connect.CodeUnauthenticated || ce.Message() != c.message || machineCode(err) != c.reason {
					t.Errorf("%s: %v (reason %q), want unauthenticated %q with reason %s", c.name, err, machineCode(err), c.message, c.reason)
				}
			}
			ok := agentsv1connect.NewAgentServiceClient(client, url, append(slices.Clip(tc.protocol), bearerOption(aliceToken))...)
			if _, err := ok.ListAgents(ctxFor(t), connect.NewRequest(&agentsv1.ListAgentsRequest{})); err != nil {
				t.Errorf("with a token: %v", err)
			}
		})
	}
}

// TestRefusalsOverGRPCWebAreTrailersOnlyAnswers: on the wire, a gRPC-Web
// call refused before the mux — no token, or a body announced over the
// limit — is HTTP 200 with its grpc-status and message in the headers (a
// trailers-only answer), the bearer challenge kept.
func TestRefusalsOverGRPCWebAreTrailersOnlyAnswers(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript(), withSecurity(server.Security{Tokens: testTokens(t)}), withLimits(server.Limits{MaxBodyBytes: 64}))
	grpcWeb := func(body string, header map[string]string) (int, http.Header, []byte) {
		h := map[string]string{"Content-Type": "application/grpc-web+proto"}
		for k, v := range header {
			h[k] = v
		}
		return e.send(request{method: "POST", path: "/agents.v1.AgentService/ListAgents", body: body, header: h})
	}
	status, header, body := grpcWeb("\x00\x00\x00\x00\x00", nil)
	if status != http.StatusOK || header.Get("Grpc-Status") != "16" || header.Get("Grpc-Message") != "a bearer token is required" || len(body) != 0 {
		t.Errorf("no token = %d %v %q, want 200 with grpc-status 16 and the message, no body", status, header, body)
	}
	if !strings.HasPrefix(header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", header.Get("WWW-Authenticate"))
	}
	status, header, body = grpcWeb("\x00\x00\x00\x00\x64"+strings.Repeat("x", 100), bearer(aliceToken))
	if status != http.StatusOK || header.Get("Grpc-Status") != "8" || !strings.Contains(header.Get("Grpc-Message"), "larger than 64 bytes") || len(body) != 0 {
		t.Errorf("too large = %d %v %q, want 200 with grpc-status 8 (resource_exhausted)", status, header, body)
	}
}

// withoutHeader is a client transport that drops a request header: a
// client that compresses its messages but forgets to say so.
type withoutHeader struct {
	name string
	next http.RoundTripper
}

func (d withoutHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Del(d.name)
	return d.next.RoundTrip(r)
}

// TestFramingMistakesAreInvalidArgument: a message flagged compressed in
// a request that names no encoding, or a body that ends inside a message,
// is the client's mistake: invalid_argument, logged at INFO with the
// procedure named, where connect-go alone answers internal and the log
// said ERROR. A JSON body sent as gRPC-Web does it by accident: its "{"
// reads as the compressed flag.
func TestFramingMistakesAreInvalidArgument(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	e := start(t, bossScript(), withLogTo(&log))
	url, client := e.h2c()
	client.Transport = withoutHeader{name: "Grpc-Encoding", next: client.Transport}
	for _, tc := range []struct {
		name     string
		protocol connect.ClientOption
	}{
		{"gRPC", connect.WithGRPC()},
		{"gRPC-Web", connect.WithGRPCWeb()},
	} {
		agents := agentsv1connect.NewAgentServiceClient(client, url, tc.protocol, connect.WithSendGzip(), connect.WithCompressMinBytes(0))
		_, err := agents.GetAgent(ctxFor(t), connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "boss"}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "compressed") {
			t.Errorf("%s, compressed without saying so: %v, want invalid_argument about the compressed flag", tc.name, err)
		}
	}

	raw := []struct {
		name, contentType, body, want string
	}{
		{"a JSON body as gRPC-Web", "application/grpc-web+json", `{"slug": "boss"}`, "compressed"},
		{"a message cut short", "application/grpc-web+proto", "\x00\x00\x00\x00\x10abc", "ends inside"},
		{"a prefix cut short", "application/grpc-web+proto", "\x00\x00", "ends inside"},
	}
	for _, tc := range raw {
		status, header, body := e.send(request{method: "POST", path: "/agents.v1.AgentService/GetAgent", body: tc.body, header: map[string]string{"Content-Type": tc.contentType}})
		if status != http.StatusOK || header.Get("Grpc-Status") != "3" || !strings.Contains(header.Get("Grpc-Message"), tc.want) {
			t.Errorf("%s: %d %v %q, want grpc-status 3 (invalid_argument) saying %q", tc.name, status, header, body, tc.want)
		}
	}

	e.stop()
	lines := 0
	for _, l := range requestLines(t, log.String()) {
		if l.Path != "/agents.v1.AgentService/GetAgent" {
			continue
		}
		lines++
		if l.Level != "INFO" || l.Code != "invalid_argument" || l.Procedure != "/agents.v1.AgentService/GetAgent" {
			t.Errorf("logged %+v, want INFO invalid_argument naming the procedure", l)
		}
	}
	if lines != 2+len(raw) {
		t.Errorf("%d request lines for GetAgent, want %d:\n%s", lines, 2+len(raw), log.String())
	}
}

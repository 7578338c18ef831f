package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/tools/fakellm"
)

// The tokens of the auth tests. Carol's is given to the server as its
// SHA-256 only.
const (
	aliceToken = "alice-token-0123456789"
	bobToken   = "bob-token-0123456789ab"
	adminToken = "admin-token-0123456789"
	carolToken = "carol-secret-token-xyz"
)

func testTokens(t *testing.T) *server.Tokens {
	t.Helper()
	sum := sha256.Sum256([]byte(carolToken))
	doc := fmt.Sprintf(`{"tokens": [
		{"token": %q, "owner": "alice"},
		{"token": %q, "owner": "bob"},
		{"token": %q, "owner": "root", "admin": true},
		{"sha256": %q, "owner": "carol"}
	]}`, aliceToken, bobToken, adminToken, hex.EncodeToString(sum[:]))
	tokens, err := server.ParseTokens([]byte(doc))
	if err != nil {
		t.Fatalf("parse tokens: %v", err)
	}
	return tokens
}

// request is one plain HTTP request of a table test.
type request struct {
	method, path, body string
	header             map[string]string
	host               string
}

// send performs r against the test server.
func (e *env) send(r request) (int, http.Header, []byte) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(ctxFor(e.t), r.method, e.http.URL+r.path, strings.NewReader(r.body))
	if err != nil {
		e.t.Fatal(err)
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if r.host != "" {
		req.Host = r.host
	}
	res, err := e.http.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	// Event streams stay open: the status and headers are all we need.
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return res.StatusCode, res.Header, nil
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("read %s %s: %v", r.method, r.path, err)
	}
	return res.StatusCode, res.Header, b
}

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// clientAs returns a session client that sends token.
func (e *env) clientAs(token string) agentsv1connect.SessionServiceClient {
	return agentsv1connect.NewSessionServiceClient(e.http.Client(), e.http.URL, connect.WithInterceptors(tokenInterceptor(token)))
}

func tokenInterceptor(token string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			return next(ctx, req)
		}
	}
}

// createAs creates an idle session as the owner of token over the JSON
// route and returns its id.
func (e *env) createAs(token string) string {
	e.t.Helper()
	status, _, body := e.send(request{method: "POST", path: "/v1/sessions", body: `{"agent": "boss"}`, header: bearer(token)})
	if status != http.StatusCreated {
		e.t.Fatalf("create as %s: %d %s", token, status, body)
	}
	res := &agentsv1.CreateSessionResponse{Session: &agentsv1.Session{}}
	if err := apijson.Unmarshal(body, res.Session); err != nil {
		e.t.Fatal(err)
	}
	return res.GetSession().GetMeta().GetId()
}

func TestAuthRequiresAValidBearerToken(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withSecurity(server.Security{Tokens: testTokens(t)}))
	id := e.createAs(aliceToken)
	connectList := `{}`
	tests := []struct {
		name   string
		req    request
		status int
		reason string
	}{
		{"no token on a JSON route", request{method: "GET", path: "/v1/sessions"}, 401, "token_required"},
		{"no token on a Connect route", request{method: "POST", path: "/agents.v1.SessionService/ListSessions", body: connectList}, 401, "token_required"},
		{"no token on the event stream", request{method: "GET", path: "/v1/events"}, 401, "token_required"},
		{"wrong token", request{method: "GET", path: "/v1/sessions", header: bearer("not-a-token-at-all-000")}, 401, "invalid_token"},
		{"a token's digest is not a token", request{method: "GET", path: "/v1/sessions", header: bearer(hexDigest(carolToken))}, 401, "invalid_token"},
		{"not a bearer scheme", request{method: "GET", path: "/v1/sessions", header: map[string]string{"Authorization": "Basic " + aliceToken}}, 401, "token_required"},
		{"access_token off the event streams", request{method: "GET", path: "/v1/sessions?access_token=" + aliceToken}, 401, "token_required"},
		{"wrong access_token on the stream", request{method: "GET", path: "/v1/events?access_token=nope-nope-nope-nope"}, 401, "invalid_token"},
		{"right token", request{method: "GET", path: "/v1/sessions", header: bearer(aliceToken)}, 200, ""},
		{"scheme in any case", request{method: "GET", path: "/v1/sessions", header: map[string]string{"Authorization": "bearer " + aliceToken}}, 200, ""},
		{"token given as its sha256", request{method: "GET", path: "/v1/sessions", header: bearer(carolToken)}, 200, ""},
		{"right token on a Connect route", request{method: "POST", path: "/agents.v1.SessionService/ListSessions", body: connectList, header: bearer(aliceToken)}, 200, ""},
		{"access_token on the owner stream", request{method: "GET", path: "/v1/events?access_token=" + aliceToken}, 200, ""},
		{"access_token on a session stream", request{method: "GET", path: "/v1/sessions/" + id + "/events?access_token=" + aliceToken}, 200, ""},
		{"health without a token", request{method: "GET", path: "/healthz"}, 200, ""},
		{"readiness without a token", request{method: "GET", path: "/readyz"}, 200, ""},
		{"the API description without a token", request{method: "GET", path: "/openapi.json"}, 200, ""},
		{"metrics are not public by default", request{method: "GET", path: "/metrics"}, 401, "token_required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, header, body := e.send(tc.req)
			if status != tc.status {
				t.Fatalf("status = %d, want %d (%s)", status, tc.status, body)
			}
			if tc.status != http.StatusUnauthorized {
				return
			}
			if !strings.HasPrefix(header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", header.Get("WWW-Authenticate"))
			}
			code, reason, _ := jsonError(t, body)
			if code != "unauthenticated" || reason != tc.reason {
				t.Errorf("error = {%s %s}, want {unauthenticated %s}", code, reason, tc.reason)
			}
		})
	}

	// A Connect client sees the code.
	_, err := e.sessions.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("Connect client without a token: %v, want unauthenticated", err)
	}
}

func hexDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestOwnersSeeOnlyTheirOwnSessions(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withSecurity(server.Security{Tokens: testTokens(t)}))
	alices := e.createAs(aliceToken)
	bobs := e.createAs(bobToken)

	tests := []struct {
		name   string
		req    request
		status int
	}{
		{"get another owner's session", request{method: "GET", path: "/v1/sessions/" + alices, header: bearer(bobToken)}, 404},
		{"post to another owner's session", request{method: "POST", path: "/v1/sessions/" + alices + "/messages", body: `{"text": "hi"}`, header: bearer(bobToken)}, 404},
		{"delete another owner's session", request{method: "DELETE", path: "/v1/sessions/" + alices, header: bearer(bobToken)}, 404},
		{"export another owner's session", request{method: "GET", path: "/v1/sessions/" + alices + "/export", header: bearer(bobToken)}, 404},
		{"stream another owner's session", request{method: "GET", path: "/v1/sessions/" + alices + "/events", header: bearer(bobToken)}, 404},
		{"a child of another owner's session", request{method: "POST", path: "/v1/sessions", body: `{"agent": "boss", "parent_id": "` + alices + `"}`, header: bearer(bobToken)}, 404},
		{"even an admin writes as its own owner", request{method: "POST", path: "/v1/sessions/" + alices + "/messages", body: `{"text": "hi"}`, header: bearer(adminToken)}, 404},
		{"own session", request{method: "GET", path: "/v1/sessions/" + bobs, header: bearer(bobToken)}, 200},
		{"scope=all without admin", request{method: "GET", path: "/v1/sessions?scope=all", header: bearer(aliceToken)}, 403},
		{"all-scope stream without admin", request{method: "GET", path: "/v1/events?scope=all", header: bearer(aliceToken)}, 403},
		{"scope=all as admin", request{method: "GET", path: "/v1/sessions?scope=all", header: bearer(adminToken)}, 200},
		{"all-scope stream as admin", request{method: "GET", path: "/v1/events?scope=all", header: bearer(adminToken)}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.send(tc.req)
			if status != tc.status {
				t.Fatalf("status = %d, want %d (%s)", status, tc.status, body)
			}
			if status == http.StatusNotFound {
				if _, reason, _ := jsonError(t, body); reason != "unknown_session" {
					t.Errorf("reason = %q, want unknown_session", reason)
				}
			}
		})
	}

	// Listings hold only the caller's sessions; an admin's scope=all holds
	// everyone's.
	for _, tc := range []struct {
		token, path string
		want, not   []string
	}{
		{aliceToken, "/v1/sessions", []string{alices}, []string{bobs}},
		{bobToken, "/v1/sessions", []string{bobs}, []string{alices}},
		{adminToken, "/v1/sessions?scope=all", []string{alices, bobs}, nil},
	} {
		status, _, body := e.send(request{method: "GET", path: tc.path, header: bearer(tc.token)})
		if status != http.StatusOK {
			t.Fatalf("list as %s: %d %s", tc.token, status, body)
		}
		for _, id := range tc.want {
			if !strings.Contains(string(body), id) {
				t.Errorf("list as %s lacks %s", tc.token, id)
			}
		}
		for _, id := range tc.not {
			if strings.Contains(string(body), id) {
				t.Errorf("list as %s shows %s", tc.token, id)
			}
		}
	}

	// The same over Connect.
	_, err := e.clientAs(bobToken).GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: alices}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("Connect GetSession of another owner's session: %v, want not_found", err)
	}
	_, err = e.clientAs(aliceToken).ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{AllOwners: true}))
	if connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("Connect ListSessions all owners without admin: %v, want permission_denied", err)
	}
}

func TestWithoutAuthForeignHostsAndOriginsAreRefused(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withSecurity(server.Security{
		CORSOrigins:  []string{"https://app.example"},
		AllowedHosts: []string{"agents.internal:7420"},
	}))
	tests := []struct {
		name   string
		req    request
		status int
		reason string
	}{
		{"rebound host name", request{method: "GET", path: "/v1/sessions", host: "evil.example"}, 403, "host_not_allowed"},
		{"rebound host name with a port", request{method: "GET", path: "/v1/sessions", host: "evil.example:7420"}, 403, "host_not_allowed"},
		{"a private address is not loopback", request{method: "GET", path: "/v1/sessions", host: "192.168.1.5:7420"}, 403, "host_not_allowed"},
		{"foreign origin", request{method: "GET", path: "/v1/sessions", header: map[string]string{"Origin": "https://evil.example"}}, 403, "origin_not_allowed"},
		{"foreign origin on Connect", request{method: "POST", path: "/agents.v1.SessionService/ListSessions", body: `{}`, header: map[string]string{"Origin": "https://evil.example"}}, 403, "origin_not_allowed"},
		{"foreign origin on the stream", request{method: "GET", path: "/v1/events", header: map[string]string{"Origin": "http://evil.example"}}, 403, "origin_not_allowed"},
		{"null origin", request{method: "GET", path: "/v1/sessions", header: map[string]string{"Origin": "null"}}, 403, "origin_not_allowed"},
		{"loopback host", request{method: "GET", path: "/v1/sessions", host: "127.0.0.1:7420"}, 200, ""},
		{"localhost", request{method: "GET", path: "/v1/sessions", host: "localhost:7420"}, 200, ""},
		{"IPv6 loopback", request{method: "GET", path: "/v1/sessions", host: "[::1]:7420"}, 200, ""},
		{"configured host", request{method: "GET", path: "/v1/sessions", host: "agents.internal:7420"}, 200, ""},
		{"loopback origin", request{method: "GET", path: "/v1/sessions", header: map[string]string{"Origin": "http://localhost:5173"}}, 200, ""},
		{"allowed origin", request{method: "GET", path: "/v1/sessions", header: map[string]string{"Origin": "https://app.example"}}, 200, ""},
		// The web app the server itself serves on a configured host calls
		// back from that very origin.
		{"own origin on a configured host", request{method: "POST", path: "/agents.v1.SessionService/ListSessions", body: `{}`, host: "agents.internal:7420", header: map[string]string{"Origin": "http://agents.internal:7420"}}, 200, ""},
		{"a configured host's name on another port", request{method: "GET", path: "/v1/sessions", host: "agents.internal:7420", header: map[string]string{"Origin": "http://agents.internal:9999"}}, 403, "origin_not_allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.send(tc.req)
			if status != tc.status {
				t.Fatalf("status = %d, want %d (%s)", status, tc.status, body)
			}
			if tc.reason != "" {
				if code, reason, _ := jsonError(t, body); code != "permission_denied" || reason != tc.reason {
					t.Errorf("error = {%s %s}, want {permission_denied %s}", code, reason, tc.reason)
				}
			}
		})
	}
}

func TestCORSPreflightIsAnsweredBeforeAuth(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withSecurity(server.Security{
		Tokens:      testTokens(t),
		CORSOrigins: []string{"https://app.example"},
	}))
	preflight := func(origin, method, headers, path string) (int, http.Header) {
		status, header, _ := e.send(request{method: "OPTIONS", path: path, header: map[string]string{
			"Origin":                         origin,
			"Access-Control-Request-Method":  method,
			"Access-Control-Request-Headers": headers,
		}})
		return status, header
	}
	for _, tc := range []struct{ name, method, headers, path string }{
		{"JSON route", "POST", "authorization,content-type", "/v1/sessions"},
		{"Connect route", "POST", "authorization,connect-protocol-version,content-type", "/agents.v1.SessionService/CreateSession"},
		{"event stream", "GET", "authorization,last-event-id", "/v1/events"},
		{"delete", "DELETE", "authorization", "/v1/sessions/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, h := preflight("https://app.example", tc.method, tc.headers, tc.path)
			if status != http.StatusNoContent {
				t.Fatalf("preflight status = %d, want 204", status)
			}
			if got := h.Get("Access-Control-Allow-Origin"); got != "https://app.example" {
				t.Errorf("Allow-Origin = %q, want the origin echoed", got)
			}
			if got := h.Get("Access-Control-Allow-Methods"); !strings.Contains(got, tc.method) {
				t.Errorf("Allow-Methods = %q, want %s", got, tc.method)
			}
			allowed := strings.ToLower(h.Get("Access-Control-Allow-Headers"))
			for _, name := range strings.Split(tc.headers, ",") {
				if !strings.Contains(allowed, name) {
					t.Errorf("Allow-Headers = %q, lacks %s", allowed, name)
				}
			}
			if got := h.Get("Access-Control-Max-Age"); got != "7200" {
				t.Errorf("Max-Age = %q, want 7200", got)
			}
		})
	}

	t.Run("foreign origin gets no grant", func(t *testing.T) {
		status, h := preflight("https://evil.example", "POST", "authorization", "/v1/sessions")
		if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight = %d with Allow-Origin %q, want 204 and none", status, h.Get("Access-Control-Allow-Origin"))
		}
	})

	t.Run("actual request exposes the headers clients read", func(t *testing.T) {
		status, h, body := e.send(request{method: "POST", path: "/v1/sessions", body: `{"agent": "boss"}`, header: map[string]string{
			"Origin": "https://app.example", "Authorization": "Bearer " + aliceToken,
		}})
		if status != http.StatusCreated {
			t.Fatalf("create = %d %s", status, body)
		}
		if got := h.Get("Access-Control-Allow-Origin"); got != "https://app.example" {
			t.Errorf("Allow-Origin = %q", got)
		}
		exposed := strings.ToLower(h.Get("Access-Control-Expose-Headers"))
		for _, name := range []string{"location", "agents-replay", "grpc-status", "grpc-message"} {
			if !strings.Contains(exposed, name) {
				t.Errorf("Expose-Headers = %q, lacks %s", exposed, name)
			}
		}
	})

	t.Run("actual request still needs its token", func(t *testing.T) {
		status, _, _ := e.send(request{method: "GET", path: "/v1/sessions", header: map[string]string{"Origin": "https://app.example"}})
		if status != http.StatusUnauthorized {
			t.Errorf("status = %d, want 401", status)
		}
	})
}

func TestCORSWildcardNeedsNoAuth(t *testing.T) {
	t.Parallel()
	if err := (server.Security{Tokens: testTokens(t), CORSOrigins: []string{"*"}}).Validate(); err == nil {
		t.Error(`"*" with tokens validated, want an error`)
	}
	if err := (server.Security{CORSOrigins: []string{"*"}}).Validate(); err != nil {
		t.Errorf(`"*" without tokens: %v`, err)
	}
}

func TestCheckBindRefusesOpenNonLoopbackAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		bind           string
		auth, insecure bool
		ok             bool
	}{
		{"127.0.0.1", false, false, true},
		{"::1", false, false, true},
		{"localhost", false, false, true},
		{"0.0.0.0", false, false, false},
		{"", false, false, false},
		{"192.168.1.10", false, false, false},
		{"0.0.0.0", true, false, true},
		{"0.0.0.0", false, true, true},
	}
	for _, tc := range tests {
		err := server.CheckBind(tc.bind, tc.auth, tc.insecure)
		if (err == nil) != tc.ok {
			t.Errorf("CheckBind(%q, auth %v, insecure %v) = %v, want ok %v", tc.bind, tc.auth, tc.insecure, err, tc.ok)
		}
	}
}

func TestLimitsRefuseOversizedRequests(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withLimits(server.Limits{
		MaxBodyBytes:       2048,
		MaxMessageBytes:    64,
		MaxAttachmentBytes: 16,
	}))
	big := strings.Repeat("x", 4096)
	long := strings.Repeat("y", 100)
	// The JSON routes answer 413 with the machine code as reason. The
	// Connect protocol fixes the HTTP status of each code itself (429 for
	// resource_exhausted) and carries the machine code in a detail; only a
	// body refused before Connect reads it is a 413 there too.
	tests := []struct {
		name    string
		req     request
		chunked bool
		status  int
		reason  string
	}{
		{"body over the limit", request{method: "POST", path: "/v1/sessions", body: `{"agent": "boss", "title": "` + big + `"}`}, false, 413, "body_too_large"},
		{"body over the limit without a length", request{method: "POST", path: "/v1/sessions", body: `{"agent": "boss", "title": "` + big + `"}`}, true, 413, "body_too_large"},
		{"Connect body over the limit", request{method: "POST", path: "/agents.v1.SessionService/CreateSession", body: `{"agent": "boss", "title": "` + big + `"}`}, false, 413, "body_too_large"},
		{"message over the limit", request{method: "POST", path: "/v1/sessions", body: `{"agent": "boss", "message": {"text": "` + long + `"}}`}, false, 413, "message_too_large"},
		{"posted message over the limit", request{method: "POST", path: "/v1/sessions/x/messages", body: `{"text": "` + long + `"}`}, false, 413, "message_too_large"},
		{"attachment over the limit", request{method: "POST", path: "/v1/sessions", body: `{"agent": "boss", "message": {"text": "see", "attachments": [{"name": "a.txt", "data": "` + b64(long) + `"}]}}`}, false, 413, "attachment_too_large"},
		{"call answer over the limit", request{method: "POST", path: "/v1/calls/t/complete", body: `{"text": "` + long + `"}`}, false, 413, "message_too_large"},
		{"mail over the limit", request{method: "POST", path: "/v1/sessions/x/mail", body: `{"body": {"userMessage": {"text": "` + long + `"}}}`}, false, 413, "message_too_large"},
		{"agent mail over the limit", request{method: "POST", path: "/v1/sessions/x/mail", body: `{"body": {"agentMessage": {"agent": "boss", "text": "` + long + `"}}}`}, false, 413, "message_too_large"},
		{"Connect message over the limit", request{method: "POST", path: "/agents.v1.SessionService/CreateSession", body: `{"agent": "boss", "message": {"text": "` + long + `"}}`}, false, 429, "message_too_large"},
		{"Connect attachment over the limit", request{method: "POST", path: "/agents.v1.SessionService/CreateSession", body: `{"agent": "boss", "message": {"text": "see", "attachments": [{"name": "a.txt", "data": "` + b64(long) + `"}]}}`}, false, 429, "attachment_too_large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.sendBody(tc.req, tc.chunked)
			if status != tc.status {
				t.Fatalf("status = %d, want %d (%s)", status, tc.status, body)
			}
			var got struct {
				Code, Reason string
				Details      []struct{ Debug struct{ Code string } }
			}
			if err := jsonUnmarshal(body, &got); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			reason := got.Reason
			if len(got.Details) > 0 {
				reason = got.Details[0].Debug.Code
			}
			if got.Code != "resource_exhausted" || reason != tc.reason {
				t.Errorf("error = %s, want resource_exhausted %s", body, tc.reason)
			}
		})
	}

	// A Connect client sees resource_exhausted with the machine code.
	_, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "boss", Message: &agentsv1.Message{Text: long}}))
	if connect.CodeOf(err) != connect.CodeResourceExhausted || machineCode(err) != "message_too_large" {
		t.Errorf("Connect oversized message: %v (%s), want resource_exhausted message_too_large", err, machineCode(err))
	}
	// Within the limits all is well.
	if _, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "boss", Message: &agentsv1.Message{Text: "short"}})); err != nil {
		t.Errorf("a message within the limits: %v", err)
	}
}

// sendBody is send with the choice of hiding the body's length, so the
// server only learns it is too large while reading.
func (e *env) sendBody(r request, chunked bool) (int, []byte) {
	e.t.Helper()
	var body io.Reader = strings.NewReader(r.body)
	if chunked {
		body = io.MultiReader(body) // not a type net/http can measure
	}
	req, err := http.NewRequestWithContext(ctxFor(e.t), r.method, e.http.URL+r.path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := e.http.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func machineCode(err error) string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return ""
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if detail, ok := v.(*agentsv1.ErrorDetail); ok {
				return detail.GetCode()
			}
		}
	}
	return ""
}

func TestRunLimitsRefuseNewRunsWithResourceExhausted(t *testing.T) {
	t.Parallel()
	// Every run calls the tool that never finishes, so it stays running.
	hang := fakellm.Rules{Default: &fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_hang"}}}}
	e := start(t, hang, withSecurity(server.Security{Tokens: testTokens(t)}), withLimits(server.Limits{MaxRunsPerOwner: 1, MaxRuns: 2}))
	alice, bob, carol := e.clientAs(aliceToken), e.clientAs(bobToken), e.clientAs(carolToken)
	run := func(c agentsv1connect.SessionServiceClient) error {
		_, err := c.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "boss", Message: &agentsv1.Message{Text: "go"}}))
		return err
	}
	if err := run(alice); err != nil {
		t.Fatalf("alice's first run: %v", err)
	}
	err := run(alice)
	if connect.CodeOf(err) != connect.CodeResourceExhausted || machineCode(err) != "too_many_runs" {
		t.Fatalf("alice's second run: %v, want resource_exhausted too_many_runs", err)
	}
	status, _, body := e.send(request{method: "POST", path: "/agents.v1.SessionService/CreateSession", body: `{"agent": "boss", "message": {"text": "go"}}`, header: bearer(aliceToken)})
	if status != http.StatusTooManyRequests {
		t.Errorf("second run over HTTP = %d %s, want 429", status, body)
	}
	// A session without a message starts no run.
	if _, err := alice.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "boss"})); err != nil {
		t.Errorf("an idle session: %v", err)
	}
	if err := run(bob); err != nil {
		t.Fatalf("bob's first run: %v", err)
	}
	if err := run(carol); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Errorf("a third run on a server limited to two: %v, want resource_exhausted", err)
	}
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestTokensNeverReachTheLog(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withSecurity(server.Security{Tokens: testTokens(t)}), withLogTo(&log))
	id := e.createAs(aliceToken)
	for _, r := range []request{
		{method: "GET", path: "/v1/sessions/" + id, header: bearer(aliceToken)},
		{method: "GET", path: "/v1/sessions/" + id, header: bearer(bobToken)},
		{method: "GET", path: "/v1/sessions", header: bearer("wrong-token-but-secret-1")},
		{method: "GET", path: "/v1/events?access_token=" + carolToken},
		{method: "POST", path: "/agents.v1.SessionService/ListSessions", body: `{}`, header: bearer(adminToken)},
	} {
		e.send(r)
	}
	_, err := e.clientAs(aliceToken).GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id}))
	if err != nil {
		t.Fatal(err)
	}
	e.stop()

	out := log.String()
	for _, secret := range []string{aliceToken, bobToken, adminToken, carolToken, "wrong-token-but-secret-1"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds the token %q:\n%s", secret, out)
		}
	}
	// The log does describe the requests: one line each, with the owner.
	for _, want := range []string{
		`"procedure":"GET /v1/sessions/{id}"`,
		`"procedure":"/agents.v1.SessionService/GetSession"`,
		`"owner":"alice"`,
		`"owner":"root"`,
		`"code":"not_found"`,
		`"code":"unauthenticated"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func TestParseTokensRefusesBadFilesWithoutQuotingTokens(t *testing.T) {
	t.Parallel()
	const secret = "a-secret-token-value-123"
	tests := []struct{ name, doc, want string }{
		{"syntax error next to a token", `{"tokens": [{"token": "` + secret + `" "owner": "x"}]}`, "must be"},
		{"unknown field", `{"tokens": [{"token": "` + secret + `", "owner": "x", "role": "admin"}]}`, "must be"},
		{"no tokens", `{"tokens": []}`, "at least one token"},
		{"token and sha256", `{"tokens": [{"token": "` + secret + `", "sha256": "` + hexDigest(secret) + `", "owner": "x"}]}`, "not both"},
		{"neither", `{"tokens": [{"owner": "x"}]}`, "token or sha256 is required"},
		{"short token", `{"tokens": [{"token": "short", "owner": "x"}]}`, "tokens[0].token: must be at least 16"},
		{"bad digest", `{"tokens": [{"sha256": "xyz", "owner": "x"}]}`, "tokens[0].sha256: must be 64 hexadecimal"},
		{"no owner", `{"tokens": [{"token": "` + secret + `"}]}`, "tokens[0].owner: is required"},
		// An owner's name is printed by every client: no escape sequence
		// in it may drive a terminal.
		{"control characters in an owner", `{"tokens": [{"token": "` + secret + `", "owner": "eve\u001b]0;owned\u0007"}]}`, "tokens[0].owner: must not hold control characters"},
		{"same token twice", `{"tokens": [{"token": "` + secret + `", "owner": "x"}, {"sha256": "` + hexDigest(secret) + `", "owner": "y"}]}`, "tokens[1]: same token as tokens[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := server.ParseTokens([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error quotes the token: %v", err)
			}
		})
	}
	tokens, err := server.ParseTokens([]byte(`{"tokens": [{"token": "` + secret + `", "owner": "x"}, {"sha256": "` + strings.ToUpper(hexDigest("another-token-value-456")) + `", "owner": "y"}]}`))
	if err != nil || tokens.Len() != 2 {
		t.Errorf("a good file: %v, %d tokens", err, tokens.Len())
	}
}

// TestReloadingAgentsNeedsAnAdmin: ReloadAgents acts on the whole server,
// so with auth on only an admin token may call it, on both transports.
func TestReloadingAgentsNeedsAnAdmin(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withSecurity(server.Security{Tokens: testTokens(t)}))
	agentsAs := func(token string) agentsv1connect.AgentServiceClient {
		return agentsv1connect.NewAgentServiceClient(e.http.Client(), e.http.URL, connect.WithInterceptors(tokenInterceptor(token)))
	}

	status, _, body := e.send(request{method: "POST", path: "/v1/agents:reload", header: bearer(aliceToken)})
	if code, reason, _ := jsonError(t, body); status != http.StatusForbidden || code != "permission_denied" || reason != "permission_denied" {
		t.Errorf("reload as alice = %d %s, want 403 permission_denied", status, body)
	}
	_, err := agentsAs(aliceToken).ReloadAgents(ctxFor(t), connect.NewRequest(&agentsv1.ReloadAgentsRequest{}))
	if connect.CodeOf(err) != connect.CodePermissionDenied || machineCode(err) != "permission_denied" {
		t.Errorf("Connect reload as alice: %v, want permission_denied", err)
	}

	if status, _, body := e.send(request{method: "POST", path: "/v1/agents:reload", header: bearer(adminToken)}); status != http.StatusOK {
		t.Errorf("reload as an admin = %d %s, want 200", status, body)
	}
	res, err := agentsAs(adminToken).ReloadAgents(ctxFor(t), connect.NewRequest(&agentsv1.ReloadAgentsRequest{}))
	if err != nil || len(res.Msg.GetAgents()) == 0 {
		t.Errorf("Connect reload as an admin: %v", err)
	}
	// Reading the agents needs no admin.
	if status, _, body := e.send(request{method: "GET", path: "/v1/agents", header: bearer(aliceToken)}); status != http.StatusOK {
		t.Errorf("list agents as alice = %d %s, want 200", status, body)
	}
}

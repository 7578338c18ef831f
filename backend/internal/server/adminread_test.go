package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/tools/fakellm"
)

// bearerAll sends a token on unary and streaming calls alike.
type bearerAll string

func (b bearerAll) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(b))
		return next(ctx, req)
	}
}

func (b bearerAll) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

func (b bearerAll) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

func (e *env) eventsAs(token string) agentsv1connect.EventServiceClient {
	return agentsv1connect.NewEventServiceClient(e.http.Client(), e.http.URL, connect.WithInterceptors(bearerAll(token)))
}

// postAs posts a message as the owner of token and waits for the run.
func (e *env) postAs(token, id, text string) {
	e.t.Helper()
	status, _, body := e.send(request{method: "POST", path: "/v1/sessions/" + id + "/messages?wait=true", body: `{"text": "` + text + `"}`, header: bearer(token)})
	if status != http.StatusOK {
		e.t.Fatalf("post as %s to %s: %d %s", token, id, status, body)
	}
}

// auditRecord is the log record of an admin's read of another owner's
// sessions.
type auditRecord struct {
	Level, Msg, Admin, Owner, Session, RPC string
}

const auditMsg = "admin read of another owner's sessions"

func auditsOf(t *testing.T, log string) []auditRecord {
	t.Helper()
	var out []auditRecord
	for line := range strings.SplitSeq(strings.TrimSpace(log), "\n") {
		var rec struct {
			Level   string `json:"level"`
			Msg     string `json:"msg"`
			Admin   string `json:"admin"`
			Owner   string `json:"owner"`
			Session string `json:"session"`
			RPC     string `json:"rpc"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Msg == auditMsg {
			out = append(out, auditRecord(rec))
		}
	}
	return out
}

// TestAnAdminReadsAndFollowsAnyOwnersSessions: an admin's sidebar lists
// every owner's sessions, so an admin may open them: GetSession,
// ExportSession, ListMail and the session's events answer another
// owner's session, and scope=owner:NAME follows another owner's events.
// Each such read is logged; writes stay the owner's alone.
func TestAnAdminReadsAndFollowsAnyOwnersSessions(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withSecurity(server.Security{Tokens: testTokens(t)}), withLogTo(&log))
	alices := e.createAs(aliceToken)
	bobs := e.createAs(bobToken)
	roots := e.createAs(adminToken)
	e.postAs(aliceToken, alices, "first")

	for _, tc := range []struct {
		name   string
		req    request
		status int
	}{
		{"an admin gets another owner's session", request{method: "GET", path: "/v1/sessions/" + alices, header: bearer(adminToken)}, 200},
		{"an admin exports it", request{method: "GET", path: "/v1/sessions/" + alices + "/export", header: bearer(adminToken)}, 200},
		{"an admin lists its mail", request{method: "GET", path: "/v1/sessions/" + alices + "/mail", header: bearer(adminToken)}, 200},
		{"an admin streams its events", request{method: "GET", path: "/v1/sessions/" + alices + "/events", header: bearer(adminToken)}, 200},
		{"an admin streams its owner's events", request{method: "GET", path: "/v1/events?scope=owner:alice", header: bearer(adminToken)}, 200},
		{"an admin posts to it", request{method: "POST", path: "/v1/sessions/" + alices + "/messages", body: `{"text": "hi"}`, header: bearer(adminToken)}, 404},
		{"an admin cancels its run", request{method: "POST", path: "/v1/sessions/" + alices + "/cancel", body: `{}`, header: bearer(adminToken)}, 404},
		{"an admin forks it", request{method: "POST", path: "/v1/sessions/" + alices + "/fork", body: `{}`, header: bearer(adminToken)}, 404},
		{"an admin deletes it", request{method: "DELETE", path: "/v1/sessions/" + alices, header: bearer(adminToken)}, 404},
		{"another owner gets it", request{method: "GET", path: "/v1/sessions/" + alices, header: bearer(bobToken)}, 404},
		{"another owner lists its mail", request{method: "GET", path: "/v1/sessions/" + alices + "/mail", header: bearer(bobToken)}, 404},
		{"another owner streams its events", request{method: "GET", path: "/v1/sessions/" + alices + "/events", header: bearer(bobToken)}, 404},
		{"another owner streams its owner's events", request{method: "GET", path: "/v1/events?scope=owner:alice", header: bearer(bobToken)}, 403},
		{"an owner names itself", request{method: "GET", path: "/v1/events?scope=owner:bob", header: bearer(bobToken)}, 200},
		{"an owner scope without a name", request{method: "GET", path: "/v1/events?scope=owner:", header: bearer(adminToken)}, 400},
		{"an owner's name over the limit", request{method: "GET", path: "/v1/events?scope=owner:" + strings.Repeat("x", 256), header: bearer(adminToken)}, 400},
	} {
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
	status, _, body := e.send(request{method: "GET", path: "/v1/sessions/" + alices, header: bearer(adminToken)})
	if status != http.StatusOK || !strings.Contains(string(body), `"owner":"alice"`) || !strings.Contains(string(body), "first") {
		t.Fatalf("admin GET of alice's session = %d %s, want it with its turns", status, body)
	}

	// Over Connect the answer says the admin may only read it.
	for _, tc := range []struct {
		token, id string
		readOnly  bool
	}{
		{adminToken, alices, true},
		{adminToken, roots, false},
		{aliceToken, alices, false},
	} {
		res, err := e.clientAs(tc.token).GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: tc.id}))
		if err != nil {
			t.Fatalf("GetSession %s as %s: %v", tc.id, tc.token, err)
		}
		if res.Msg.GetReadOnly() != tc.readOnly {
			t.Errorf("GetSession %s as %s: read_only %v, want %v", tc.id, tc.token, res.Msg.GetReadOnly(), tc.readOnly)
		}
	}

	// Following: the session's stream and the owner's stream carry
	// alice's new run, and the owner's stream nothing of bob's.
	session := e.openSSE("/v1/sessions/"+alices+"/events", "Authorization", "Bearer "+adminToken)
	owner := e.openSSE("/v1/events?scope=owner:alice", "Authorization", "Bearer "+adminToken)
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	stream, err := e.eventsAs(adminToken).Subscribe(ctx, connect.NewRequest(&agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER, Owner: "alice"}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	e.postAs(bobToken, bobs, "bob's")
	e.postAs(aliceToken, alices, "second")
	until(t, session, kind(alices, "run.stopped"))
	until(t, owner, func(ev *agentsv1.Event) bool {
		if ev.GetOwner() != "alice" && ev.GetOwner() != "" {
			t.Fatalf("alice's stream carried %s of %s", ev.GetKind(), ev.GetOwner())
		}
		return ev.GetSessionId() == alices && ev.GetKind() == "run.stopped"
	})
	for stream.Receive() {
		ev := stream.Msg().GetEvent()
		if ev == nil {
			continue
		}
		if ev.GetOwner() != "alice" && ev.GetOwner() != "" {
			t.Fatalf("alice's Connect stream carried %s of %s", ev.GetKind(), ev.GetOwner())
		}
		if ev.GetSessionId() == alices && ev.GetKind() == "run.stopped" {
			break
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("Connect Subscribe of alice's events as an admin: %v", err)
	}

	// Over Connect, a non-admin may not follow another owner, and an owner
	// is only for the owner scope.
	for _, tc := range []struct {
		name  string
		token string
		req   *agentsv1.SubscribeRequest
		code  connect.Code
	}{
		{"another owner's events", bobToken, &agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER, Owner: "alice"}, connect.CodePermissionDenied},
		{"another owner's session", bobToken, &agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION, SessionId: alices}, connect.CodeNotFound},
		{"an owner with the all scope", adminToken, &agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_ALL, Owner: "alice"}, connect.CodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := e.eventsAs(tc.token).Subscribe(ctxFor(t), connect.NewRequest(tc.req))
			if err == nil {
				for s.Receive() {
				}
				err = s.Err()
			}
			if codeOf(err) != tc.code {
				t.Fatalf("err = %v, want %v", err, tc.code)
			}
		})
	}

	// Every read of alice's sessions by the admin is in the log, at INFO,
	// naming both and the session; nobody's own reads, and no refused
	// read, are.
	want := map[auditRecord]bool{
		{Level: "INFO", Msg: auditMsg, Admin: "root", Owner: "alice", Session: alices, RPC: "agents.v1.SessionService.GetSession"}:    false,
		{Level: "INFO", Msg: auditMsg, Admin: "root", Owner: "alice", Session: alices, RPC: "agents.v1.SessionService.ExportSession"}: false,
		{Level: "INFO", Msg: auditMsg, Admin: "root", Owner: "alice", Session: alices, RPC: "agents.v1.SessionService.ListMail"}:      false,
		{Level: "INFO", Msg: auditMsg, Admin: "root", Owner: "alice", Session: alices, RPC: "agents.v1.EventService.Subscribe"}:       false,
		{Level: "INFO", Msg: auditMsg, Admin: "root", Owner: "alice", Session: "", RPC: "agents.v1.EventService.Subscribe"}:           false,
	}
	for _, rec := range auditsOf(t, log.String()) {
		if _, ok := want[rec]; !ok {
			t.Errorf("unexpected audit record %+v", rec)
		}
		want[rec] = true
	}
	for rec, seen := range want {
		if !seen {
			t.Errorf("no audit record %+v", rec)
		}
	}
}

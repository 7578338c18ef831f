package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
)

// route is one plain JSON route of DESIGN §3. The mux is built from the
// route table and /openapi.json is generated from the same table, so what
// is served and what is described cannot drift apart. Each route decodes
// into the request message of its RPC and calls the same handler; bodies
// and answers are in the routes' representation (apijson), and an answer
// that is one resource (a session, an agent, a mail) is that resource,
// not the RPC's response around it.
type route struct {
	method, path string
	// rpc is the full name of the RPC the route calls; its comment in the
	// protos describes the operation.
	rpc string
	// body is the JSON request body, nil when there is none: the route
	// refuses a body that is not JSON (415).
	body proto.Message
	// definition says the body is an agent file's JSON as it is, no
	// message of the protos (CreateAgent, UpdateAgent).
	definition bool
	// query lists the query parameters.
	query []param
	// status is the success status; response the JSON answer, nil when
	// there is none; produces lists the other types the route answers
	// with.
	status   int
	response proto.Message
	produces []string
	// header names a response header the route sets on success.
	header string

	serve http.HandlerFunc
}

// param is a query parameter.
type param struct {
	name, doc string
	// kind is the JSON schema type: string (default), integer, boolean.
	kind string
	enum []string
}

// routes mounts the JSON routes.
func (s *Server) routes(mux *http.ServeMux) {
	for _, rt := range s.routeTable() {
		mux.HandleFunc(rt.method+" "+rt.path, s.checkRequest(rt))
	}
}

// checkRequest refuses what no route of the table reads — a query
// parameter it does not take, a body that is not JSON — and hands the
// route its query spelt as the table spells it.
func (s *Server) checkRequest(rt route) http.HandlerFunc {
	camel := make([]string, len(rt.query))
	for i, p := range rt.query {
		camel[i] = apijson.CamelCase(p.name)
	}
	// A body of short fields only is refused past maxShortBody, from its
	// length when it has one: a PATCH of a title or a budget never needs
	// megabytes, and reading them costs the server what the client sent.
	var short bool
	if rt.body != nil {
		short = shortFieldsOnly(rt.body.ProtoReflect().Descriptor())
	}
	readsNoBody := rt.body == nil && !rt.definition && rt.method != http.MethodGet && rt.method != http.MethodHead
	return func(w http.ResponseWriter, r *http.Request) {
		if readsNoBody {
			if err := noBody(r); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		if short {
			if r.ContentLength > maxShortBody {
				s.writeError(w, r, errs.TooLarge(errs.CodeBodyTooLarge, "request body is larger than %d bytes", maxShortBody))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxShortBody)
		}
		if r.URL.RawQuery != "" {
			q, respelt, err := canonicalQuery(queryOf(r), rt.query, camel)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			if respelt {
				r.URL.RawQuery = q.Encode()
				if st := stateOf(r.Context()); st != nil {
					st.query, st.rawQuery = q, r.URL.RawQuery
				}
			}
		}
		if ct := r.Header.Get("Content-Type"); (rt.body != nil || rt.definition) && r.ContentLength != 0 && !isJSON(ct) {
			writeErrorBody(w, http.StatusUnsupportedMediaType, errorBody{
				Code: connect.CodeInvalidArgument.String(), Reason: errs.CodeUnsupportedMediaType,
				Message: fmt.Sprintf("Content-Type %s is not read here: send JSON with Content-Type application/json (curl --json)", ct),
			})
			return
		}
		rt.serve(w, r)
	}
}

// routeTable lists the JSON routes with their handlers. It only builds
// closures, so a zero Server gives the table for describing it.
func (s *Server) routeTable() []route {
	agents := &agentService{s: s}
	sessions := &sessionService{s: s}
	owners := &ownerService{s: s}
	hooks := &webhookService{s: s}
	sse := []string{"text/event-stream"}
	after := param{name: "after", doc: "Resume after this position (or send Last-Event-ID): seq, an SSE id (seq.delta.tag), or seq.delta_seq with an event's two numbers as they came. The delta part is opaque: it carries the tag of the server process that numbered the delta, and a position another server gave replays the logged events after its seq but none of this server's deltas at that seq."}
	kinds := param{name: "kinds", doc: "Only events of these kinds, comma-separated (kinds=run.stopped,session.failed); absent is every kind. An unknown kind is refused. A reconnect with Last-Event-ID and the same kinds misses none of them."}
	accessToken := param{name: "access_token", doc: "The bearer token, for clients that cannot set headers (EventSource)."}
	waitParam := param{name: "wait", kind: "boolean", doc: "Answer once the session is not running."}
	expectedVersion := param{name: "expected_version", kind: "integer", doc: "Change the agent only if its current version is this one (else 409, code version_mismatch)."}
	timeoutParam := param{name: "timeout", doc: "Longest wait, such as 30s or 2m, or a number of seconds (default 30s, at most 5m)."}

	return append([]route{
		{
			method: "GET", path: "/v1/agents", rpc: "agents.v1.AgentService.ListAgents",
			status: http.StatusOK, response: &agentsv1.ListAgentsResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				return unary(r.Context(), s, &agentsv1.ListAgentsRequest{}, agents.ListAgents)
			}),
		},
		{
			method: "GET", path: "/v1/agents/{slug}", rpc: "agents.v1.AgentService.GetAgent",
			status: http.StatusOK, response: &agentsv1.AgentDescriptor{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				res, _, err := unary(r.Context(), s, &agentsv1.GetAgentRequest{Slug: r.PathValue("slug")}, agents.GetAgent)
				return res.GetAgent(), http.StatusOK, err
			}),
		},
		{
			method: "POST", path: "/v1/agents:reload", rpc: "agents.v1.AgentService.ReloadAgents",
			status: http.StatusOK, response: &agentsv1.ReloadAgentsResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				return unary(r.Context(), s, &agentsv1.ReloadAgentsRequest{}, agents.ReloadAgents)
			}),
		},
		{
			method: "POST", path: "/v1/agents", rpc: "agents.v1.AgentService.CreateAgent",
			definition: true,
			status:     http.StatusCreated, response: &agentsv1.AgentDescriptor{}, header: "Location",
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				def, err := readDefinition(r)
				if err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, &agentsv1.CreateAgentRequest{Definition: def}, agents.CreateAgent)
				if err != nil {
					return nil, 0, err
				}
				w.Header().Set("Location", "/v1/agents/"+res.GetAgent().GetSlug())
				return res.GetAgent(), http.StatusCreated, nil
			}),
		},
		{
			method: "PUT", path: "/v1/agents/{slug}", rpc: "agents.v1.AgentService.UpdateAgent",
			definition: true, query: []param{expectedVersion},
			status: http.StatusOK, response: &agentsv1.AgentDescriptor{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				def, err := readDefinition(r)
				if err != nil {
					return nil, 0, err
				}
				req := &agentsv1.UpdateAgentRequest{Slug: r.PathValue("slug"), Definition: def}
				if req.ExpectedVersion, err = queryVersion(r); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, agents.UpdateAgent)
				return res.GetAgent(), http.StatusOK, err
			}),
		},
		{
			method: "DELETE", path: "/v1/agents/{slug}", rpc: "agents.v1.AgentService.DeleteAgent",
			query:  []param{expectedVersion},
			status: http.StatusOK, response: &agentsv1.DeleteAgentResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.DeleteAgentRequest{Slug: r.PathValue("slug")}
				var err error
				if req.ExpectedVersion, err = queryVersion(r); err != nil {
					return nil, 0, err
				}
				return unary(r.Context(), s, req, agents.DeleteAgent)
			}),
		},
		{
			method: "POST", path: "/v1/agents/{slug}/rollback", rpc: "agents.v1.AgentService.RollbackAgent",
			body:   &agentsv1.RollbackAgentRequest{},
			status: http.StatusOK, response: &agentsv1.AgentDescriptor{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.RollbackAgentRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "slug", "slug", &req.Slug); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, agents.RollbackAgent)
				return res.GetAgent(), http.StatusOK, err
			}),
		},
		{
			method: "GET", path: "/v1/agents/{slug}/versions", rpc: "agents.v1.AgentService.ListAgentVersions",
			status: http.StatusOK, response: &agentsv1.ListAgentVersionsResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				return unary(r.Context(), s, &agentsv1.ListAgentVersionsRequest{Slug: r.PathValue("slug")}, agents.ListAgentVersions)
			}),
		},
		{
			method: "POST", path: "/v1/sessions", rpc: "agents.v1.SessionService.CreateSession",
			body: &agentsv1.CreateSessionRequest{},
			query: []param{
				{name: "wait", kind: "boolean", doc: "Answer once the first message's run stopped, with the whole session (or set wait in the body)."},
				timeoutParam,
			},
			status: http.StatusCreated, response: &agentsv1.Session{}, header: "Location",
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.CreateSessionRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := queryWait(r, &req.Wait, &req.Timeout); err != nil {
					return nil, 0, err
				}
				if err := idempotencyKey(r, &req.IdempotencyKey); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, sessions.CreateSession)
				if err != nil {
					return nil, 0, err
				}
				w.Header().Set("Location", "/v1/sessions/"+res.GetSession().GetMeta().GetId())
				return res.GetSession(), http.StatusCreated, nil
			}),
		},
		{
			method: "GET", path: "/v1/sessions", rpc: "agents.v1.SessionService.ListSessions",
			query: []param{
				{name: "agent", doc: "Only sessions of this agent."},
				{name: "status", doc: "Only sessions in this status.", enum: apijson.EnumNames(agentsv1.SessionStatus(0).Descriptor())},
				{name: "parent", doc: "Only the children of this session."},
				{name: "roots", kind: "boolean", doc: "Leave out sub-agent sessions."},
				{name: "q", doc: "Only sessions whose title contains this."},
				{name: "limit", kind: "integer", doc: "Page size (default 50, at most 500)."},
				{name: "page_token", doc: "The next_page_token of the previous page; absent for the first."},
				{name: "scope", doc: "owner (default) or all (admin only).", enum: []string{"owner", "all"}},
			},
			status: http.StatusOK, response: &agentsv1.ListSessionsResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req, err := listRequest(r)
				if err != nil {
					return nil, 0, err
				}
				return unary(r.Context(), s, req, sessions.ListSessions)
			}),
		},
		{
			method: "GET", path: "/v1/sessions/{id}", rpc: "agents.v1.SessionService.GetSession",
			query: []param{
				{name: "view", doc: "full (default) or meta: leave every turn out (meta_only).", enum: []string{"full", "meta"}},
				{name: "after_turn", kind: "integer", doc: "Only the turns after this index: the newest turn the client has."},
				{name: "before_turn", kind: "integer", doc: "Only the turns before this index (a page back from the oldest turn the client has)."},
				{name: "limit", kind: "integer", doc: "At most this many turns from the start of the range (turn_limit)."},
				{name: "last", kind: "integer", doc: "Only the last this many turns of the range (last_turns)."},
				waitParam, timeoutParam,
			},
			status: http.StatusOK, response: &agentsv1.Session{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req, err := getRequest(r)
				if err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, sessions.GetSession)
				return res.GetSession(), http.StatusOK, err
			}),
		},
		{
			method: "DELETE", path: "/v1/sessions/{id}", rpc: "agents.v1.SessionService.DeleteSession",
			query:  []param{{name: "mode", doc: "single (default) or cascade: also delete the sub-agent sessions.", enum: apijson.EnumNames(agentsv1.DeleteMode(0).Descriptor())}},
			status: http.StatusOK, response: &agentsv1.DeleteSessionResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				mode, err := queryEnum(queryOf(r).Get("mode"), "mode", agentsv1.DeleteMode(0).Descriptor())
				if err != nil {
					return nil, 0, err
				}
				req := &agentsv1.DeleteSessionRequest{SessionId: r.PathValue("id"), Mode: agentsv1.DeleteMode(mode)}
				return unary(r.Context(), s, req, sessions.DeleteSession)
			}),
		},
		{
			method: "POST", path: "/v1/sessions/{id}/messages", rpc: "agents.v1.SessionService.PostMessage",
			body: &agentsv1.PostMessageRequest{},
			query: []param{
				{name: "wait", kind: "boolean", doc: "Answer once the run the message started (or joined as mail) stopped, with the turns stored since the message in session (or set wait in the body)."},
				timeoutParam,
			},
			status: http.StatusOK, response: &agentsv1.PostMessageResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.PostMessageRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "id", "session_id", &req.SessionId); err != nil {
					return nil, 0, err
				}
				if err := idempotencyKey(r, &req.IdempotencyKey); err != nil {
					return nil, 0, err
				}
				if err := queryWait(r, &req.Wait, &req.Timeout); err != nil {
					return nil, 0, err
				}
				return unary(r.Context(), s, req, sessions.PostMessage)
			}),
		},
		{
			method: "POST", path: "/v1/sessions/{id}/cancel", rpc: "agents.v1.SessionService.CancelRun",
			status: http.StatusOK, response: &agentsv1.SessionMeta{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				res, _, err := unary(r.Context(), s, &agentsv1.CancelRunRequest{SessionId: r.PathValue("id")}, sessions.CancelRun)
				return res.GetMeta(), http.StatusOK, err
			}),
		},
		{
			method: "POST", path: "/v1/sessions/{id}/cancel-attached", rpc: "agents.v1.SessionService.CancelAttached",
			status: http.StatusOK, response: &agentsv1.CancelAttachedResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				return unary(r.Context(), s, &agentsv1.CancelAttachedRequest{SessionId: r.PathValue("id")}, sessions.CancelAttached)
			}),
		},
		{
			method: "POST", path: "/v1/sessions/{id}/pause", rpc: "agents.v1.SessionService.Pause",
			status: http.StatusOK, response: &agentsv1.SessionMeta{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				res, _, err := unary(r.Context(), s, &agentsv1.PauseRequest{SessionId: r.PathValue("id")}, sessions.Pause)
				return res.GetMeta(), http.StatusOK, err
			}),
		},
		{
			method: "POST", path: "/v1/sessions/{id}/compact", rpc: "agents.v1.SessionService.Compact",
			body:   &agentsv1.CompactRequest{},
			status: http.StatusOK, response: &agentsv1.CompactResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.CompactRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "id", "session_id", &req.SessionId); err != nil {
					return nil, 0, err
				}
				return unary(r.Context(), s, req, sessions.Compact)
			}),
		},
		{
			method: "POST", path: "/v1/sessions/{id}/rename", rpc: "agents.v1.SessionService.RenameSession",
			body:   &agentsv1.RenameSessionRequest{},
			status: http.StatusOK, response: &agentsv1.SessionMeta{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.RenameSessionRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "id", "session_id", &req.SessionId); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, sessions.RenameSession)
				return res.GetMeta(), http.StatusOK, err
			}),
		},
		{
			method: "PATCH", path: "/v1/sessions/{id}", rpc: "agents.v1.SessionService.UpdateSession",
			body:   &agentsv1.UpdateSessionRequest{},
			status: http.StatusOK, response: &agentsv1.SessionMeta{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.UpdateSessionRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "id", "session_id", &req.SessionId); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, sessions.UpdateSession)
				return res.GetMeta(), http.StatusOK, err
			}),
		},
		{
			method: "PUT", path: "/v1/owners/{owner}/budget", rpc: "agents.v1.OwnerService.SetOwnerBudget",
			body:   &agentsv1.SetOwnerBudgetRequest{},
			status: http.StatusOK, response: &agentsv1.OwnerBudget{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.SetOwnerBudgetRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "owner", "owner", &req.Owner); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, owners.SetOwnerBudget)
				return res.GetBudget(), http.StatusOK, err
			}),
		},
		{
			method: "GET", path: "/v1/owners/{owner}/budget", rpc: "agents.v1.OwnerService.GetOwnerBudget",
			status: http.StatusOK, response: &agentsv1.OwnerBudget{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				res, _, err := unary(r.Context(), s, &agentsv1.GetOwnerBudgetRequest{Owner: r.PathValue("owner")}, owners.GetOwnerBudget)
				return res.GetBudget(), http.StatusOK, err
			}),
		},
		{
			method: "GET", path: "/v1/owners/{owner}/usage", rpc: "agents.v1.OwnerService.GetOwnerUsage",
			query: []param{
				{name: "bucket", doc: "Add the usage over time, summed per UTC hour or day: hour or day.", enum: apijson.EnumNames(agentsv1.UsageBucket(0).Descriptor())},
				{name: "since", doc: "Start of the series, an RFC 3339 time, rounded down to its bucket (default: 30 days or 48 hours before until)."},
				{name: "until", doc: "End of the series, an RFC 3339 time, rounded up to its bucket (default: the end of the current bucket). At most 366 days or 744 hours."},
				{name: "all_owners", kind: "boolean", doc: "The series counts every owner's calls, each row naming its owner (admin only)."},
			},
			status: http.StatusOK, response: &agentsv1.OwnerUsage{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req, err := usageRequest(r)
				if err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, owners.GetOwnerUsage)
				return res.GetUsage(), http.StatusOK, err
			}),
		},
		{
			method: "POST", path: "/v1/webhooks", rpc: "agents.v1.WebhookService.CreateWebhook",
			body:   &agentsv1.CreateWebhookRequest{},
			status: http.StatusCreated, response: &agentsv1.CreateWebhookResponse{}, header: "Location",
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.CreateWebhookRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := idempotencyKey(r, &req.IdempotencyKey); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, hooks.CreateWebhook)
				if err != nil {
					return nil, 0, err
				}
				w.Header().Set("Location", "/v1/webhooks/"+res.GetWebhook().GetId())
				return res, http.StatusCreated, nil
			}),
		},
		{
			method: "GET", path: "/v1/webhooks", rpc: "agents.v1.WebhookService.ListWebhooks",
			query:  []param{{name: "scope", doc: "owner (default: the caller's webhooks) or all (every owner's; admin only).", enum: []string{"owner", "all"}}},
			status: http.StatusOK, response: &agentsv1.ListWebhooksResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.ListWebhooksRequest{}
				switch scope := queryOf(r).Get("scope"); scope {
				case "", "owner":
				case "all":
					req.AllOwners = true
				default:
					return nil, 0, errs.Invalid(errs.CodeInvalidArgument, "query parameter `scope` must be owner or all, not %q", scope)
				}
				return unary(r.Context(), s, req, hooks.ListWebhooks)
			}),
		},
		{
			method: "GET", path: "/v1/webhooks/{id}", rpc: "agents.v1.WebhookService.GetWebhook",
			status: http.StatusOK, response: &agentsv1.Webhook{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				res, _, err := unary(r.Context(), s, &agentsv1.GetWebhookRequest{WebhookId: r.PathValue("id")}, hooks.GetWebhook)
				return res.GetWebhook(), http.StatusOK, err
			}),
		},
		{
			method: "PATCH", path: "/v1/webhooks/{id}", rpc: "agents.v1.WebhookService.UpdateWebhook",
			body:   &agentsv1.UpdateWebhookRequest{},
			status: http.StatusOK, response: &agentsv1.Webhook{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.UpdateWebhookRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "id", "webhook_id", &req.WebhookId); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, hooks.UpdateWebhook)
				return res.GetWebhook(), http.StatusOK, err
			}),
		},
		{
			method: "DELETE", path: "/v1/webhooks/{id}", rpc: "agents.v1.WebhookService.DeleteWebhook",
			status: http.StatusOK, response: &agentsv1.DeleteWebhookResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				return unary(r.Context(), s, &agentsv1.DeleteWebhookRequest{WebhookId: r.PathValue("id")}, hooks.DeleteWebhook)
			}),
		},
		{
			method: "GET", path: "/v1/webhooks/{id}/deliveries", rpc: "agents.v1.WebhookService.ListWebhookDeliveries",
			query: []param{
				{name: "status", doc: "Only deliveries in this status.", enum: apijson.EnumNames(agentsv1.DeliveryStatus(0).Descriptor())},
				{name: "limit", kind: "integer", doc: "Most deliveries to return (default 50, at most 500)."},
			},
			status: http.StatusOK, response: &agentsv1.ListWebhookDeliveriesResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				q := queryOf(r)
				req := &agentsv1.ListWebhookDeliveriesRequest{WebhookId: r.PathValue("id")}
				status, err := queryEnum(q.Get("status"), "status", agentsv1.DeliveryStatus(0).Descriptor())
				if err != nil {
					return nil, 0, err
				}
				req.Status = agentsv1.DeliveryStatus(status)
				if l := q.Get("limit"); l != "" {
					n, err := parseInt(l, "limit")
					if err != nil {
						return nil, 0, err
					}
					if n < 0 || n > store.MaxPageSize {
						return nil, 0, errs.Invalid(errs.CodeInvalidArgument, "query parameter `limit` must be from 0 (the default, %d) to %d, not %d", store.DefaultPageSize, store.MaxPageSize, n)
					}
					req.Limit = int32(n)
				}
				return unary(r.Context(), s, req, hooks.ListWebhookDeliveries)
			}),
		},
		{
			method: "POST", path: "/v1/sessions/{id}/resume", rpc: "agents.v1.SessionService.Resume",
			body:   &agentsv1.ResumeRequest{},
			status: http.StatusOK, response: &agentsv1.SessionMeta{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.ResumeRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "id", "session_id", &req.SessionId); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, sessions.Resume)
				return res.GetMeta(), http.StatusOK, err
			}),
		},
		{
			method: "POST", path: "/v1/sessions/{id}/mail", rpc: "agents.v1.SessionService.SendMail",
			body:   &agentsv1.SendMailRequest{},
			status: http.StatusCreated, response: &agentsv1.MailEnvelope{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.SendMailRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "id", "session_id", &req.SessionId); err != nil {
					return nil, 0, err
				}
				if err := idempotencyKey(r, &req.IdempotencyKey); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, sessions.SendMail)
				return res.GetEnvelope(), http.StatusCreated, err
			}),
		},
		{
			method: "GET", path: "/v1/sessions/{id}/mail", rpc: "agents.v1.SessionService.ListMail",
			query:  []param{{name: "pending", kind: "boolean", doc: "Only undelivered mail."}},
			status: http.StatusOK, response: &agentsv1.ListMailResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				pending, err := queryBool(queryOf(r).Get("pending"), "pending")
				if err != nil {
					return nil, 0, err
				}
				return unary(r.Context(), s, &agentsv1.ListMailRequest{SessionId: r.PathValue("id"), PendingOnly: pending}, sessions.ListMail)
			}),
		},
		{
			method: "POST", path: "/v1/sessions/{id}/fork", rpc: "agents.v1.SessionService.ForkSession",
			body:   &agentsv1.ForkSessionRequest{},
			status: http.StatusCreated, response: &agentsv1.Session{}, header: "Location",
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.ForkSessionRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "id", "session_id", &req.SessionId); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, sessions.ForkSession)
				if err != nil {
					return nil, 0, err
				}
				w.Header().Set("Location", "/v1/sessions/"+res.GetSession().GetMeta().GetId())
				return res.GetSession(), http.StatusCreated, nil
			}),
		},
		{
			method: "POST", path: "/v1/sessions/{id}/watch", rpc: "agents.v1.SessionService.WatchSession",
			body:   &agentsv1.WatchSessionRequest{},
			status: http.StatusOK, response: &agentsv1.Watch{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.WatchSessionRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "id", "watcher_id", &req.WatcherId); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, sessions.WatchSession)
				return res.GetWatch(), http.StatusOK, err
			}),
		},
		{
			method: "DELETE", path: "/v1/sessions/{id}/watch/{target}", rpc: "agents.v1.SessionService.UnwatchSession",
			status: http.StatusOK, response: &agentsv1.UnwatchSessionResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				return unary(r.Context(), s, &agentsv1.UnwatchSessionRequest{WatcherId: r.PathValue("id"), TargetId: r.PathValue("target")}, sessions.UnwatchSession)
			}),
		},
		{
			method: "POST", path: "/v1/calls/{token}/complete", rpc: "agents.v1.SessionService.CompleteCall",
			body:   &agentsv1.CompleteCallRequest{},
			status: http.StatusOK, response: &agentsv1.CompleteCallResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.CompleteCallRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "token", "token", &req.Token); err != nil {
					return nil, 0, err
				}
				if err := idempotencyKey(r, &req.IdempotencyKey); err != nil {
					return nil, 0, err
				}
				return unary(r.Context(), s, req, sessions.CompleteCall)
			}),
		},
		{
			method: "GET", path: "/v1/sessions/{id}/export", rpc: "agents.v1.SessionService.ExportSession",
			query:  []param{{name: "format", doc: "markdown (default) or json.", enum: apijson.EnumNames(agentsv1.ExportFormat(0).Descriptor())}},
			status: http.StatusOK, produces: []string{"text/markdown"}, response: &agentsv1.Session{},
			serve: s.exportRoute(sessions),
		},
		{
			method: "POST", path: "/v1/sessions:import", rpc: "agents.v1.SessionService.ImportSessions",
			body:   &agentsv1.ImportSessionsRequest{},
			status: http.StatusOK, response: &agentsv1.ImportSessionsResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.ImportSessionsRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				return unary(r.Context(), s, req, sessions.ImportSessions)
			}),
		},
		{
			method: "GET", path: "/v1/events", rpc: "agents.v1.EventService.Subscribe",
			query: []param{
				{name: "scope", doc: "owner (default: the caller's sessions), owner:NAME (that owner's; another owner's needs an admin token, and the read is logged) or all (admin only)."},
				{name: "session_id", doc: "One session's events, as /v1/sessions/{id}/events: it implies the session scope, and goes with no other."},
				kinds, after, accessToken,
			},
			status: http.StatusOK, produces: sse, header: replayHeader,
			serve: s.sseRoute(false),
		},
		{
			method: "GET", path: "/v1/sessions/{id}/events", rpc: "agents.v1.EventService.Subscribe",
			query:  []param{kinds, after, accessToken},
			status: http.StatusOK, produces: sse, header: replayHeader,
			serve: s.sseRoute(true),
		},
	}, s.scheduleRoutes()...)
}

// scheduleRoutes are the routes of ScheduleService.
func (s *Server) scheduleRoutes() []route {
	schedules := &scheduleService{s: s}
	// byID is a route of one schedule whose request has only its id.
	byID := func(method, path, rpc string, response proto.Message, call func(r *http.Request, id string) (proto.Message, error)) route {
		return route{
			method: method, path: path, rpc: rpc,
			status: http.StatusOK, response: response,
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				res, err := call(r, r.PathValue("id"))
				return res, http.StatusOK, err
			}),
		}
	}
	return []route{
		{
			method: "POST", path: "/v1/schedules", rpc: "agents.v1.ScheduleService.CreateSchedule",
			body:   &agentsv1.CreateScheduleRequest{},
			status: http.StatusCreated, response: &agentsv1.Schedule{}, header: "Location",
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.CreateScheduleRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := idempotencyKey(r, &req.IdempotencyKey); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, schedules.CreateSchedule)
				if err != nil {
					return nil, 0, err
				}
				w.Header().Set("Location", "/v1/schedules/"+res.GetSchedule().GetId())
				return res.GetSchedule(), http.StatusCreated, nil
			}),
		},
		{
			method: "GET", path: "/v1/schedules", rpc: "agents.v1.ScheduleService.ListSchedules",
			query: []param{
				{name: "agent", doc: "Only the schedules of this agent."},
				{name: "session_id", doc: "Only the schedules that post to this session."},
			},
			status: http.StatusOK, response: &agentsv1.ListSchedulesResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				q := queryOf(r)
				return unary(r.Context(), s, &agentsv1.ListSchedulesRequest{Agent: q.Get("agent"), SessionId: q.Get("session_id")}, schedules.ListSchedules)
			}),
		},
		byID("GET", "/v1/schedules/{id}", "agents.v1.ScheduleService.GetSchedule", &agentsv1.Schedule{}, func(r *http.Request, id string) (proto.Message, error) {
			res, _, err := unary(r.Context(), s, &agentsv1.GetScheduleRequest{ScheduleId: id}, schedules.GetSchedule)
			return res.GetSchedule(), err
		}),
		{
			method: "PATCH", path: "/v1/schedules/{id}", rpc: "agents.v1.ScheduleService.UpdateSchedule",
			body:   &agentsv1.UpdateScheduleRequest{},
			status: http.StatusOK, response: &agentsv1.Schedule{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.UpdateScheduleRequest{}
				if err := decodeBody(r, req); err != nil {
					return nil, 0, err
				}
				if err := fromPath(r, "id", "schedule_id", &req.ScheduleId); err != nil {
					return nil, 0, err
				}
				res, _, err := unary(r.Context(), s, req, schedules.UpdateSchedule)
				return res.GetSchedule(), http.StatusOK, err
			}),
		},
		byID("DELETE", "/v1/schedules/{id}", "agents.v1.ScheduleService.DeleteSchedule", &agentsv1.DeleteScheduleResponse{}, func(r *http.Request, id string) (proto.Message, error) {
			res, _, err := unary(r.Context(), s, &agentsv1.DeleteScheduleRequest{ScheduleId: id}, schedules.DeleteSchedule)
			return res, err
		}),
		byID("POST", "/v1/schedules/{id}/pause", "agents.v1.ScheduleService.PauseSchedule", &agentsv1.Schedule{}, func(r *http.Request, id string) (proto.Message, error) {
			res, _, err := unary(r.Context(), s, &agentsv1.PauseScheduleRequest{ScheduleId: id}, schedules.PauseSchedule)
			return res.GetSchedule(), err
		}),
		byID("POST", "/v1/schedules/{id}/resume", "agents.v1.ScheduleService.ResumeSchedule", &agentsv1.Schedule{}, func(r *http.Request, id string) (proto.Message, error) {
			res, _, err := unary(r.Context(), s, &agentsv1.ResumeScheduleRequest{ScheduleId: id}, schedules.ResumeSchedule)
			return res.GetSchedule(), err
		}),
		byID("POST", "/v1/schedules/{id}/fire", "agents.v1.ScheduleService.FireSchedule", &agentsv1.ScheduleFiring{}, func(r *http.Request, id string) (proto.Message, error) {
			res, _, err := unary(r.Context(), s, &agentsv1.FireScheduleRequest{ScheduleId: id}, schedules.FireSchedule)
			return res.GetFiring(), err
		}),
		{
			method: "GET", path: "/v1/schedules/{id}/firings", rpc: "agents.v1.ScheduleService.ListFirings",
			query:  []param{{name: "limit", kind: "integer", doc: "Most firings to return (default 50, at most 500)."}},
			status: http.StatusOK, response: &agentsv1.ListFiringsResponse{},
			serve: s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
				req := &agentsv1.ListFiringsRequest{ScheduleId: r.PathValue("id")}
				if v := queryOf(r).Get("limit"); v != "" {
					n, err := strconv.ParseInt(v, 10, 32)
					if err != nil || n < 0 {
						return nil, 0, errs.Invalid(errs.CodeInvalidArgument, "limit is a number of firings, not %q", v)
					}
					req.Limit = int32(n)
				}
				return unary(r.Context(), s, req, schedules.ListFirings)
			}),
		},
	}
}

// unary calls a Connect handler method with a request message, after the
// same admission checks (sizes, run limits) as the RPC.
func unary[Req, Res any](ctx context.Context, s *Server, req *Req, fn func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error)) (*Res, int, error) {
	if err := s.admit(ctx, req); err != nil {
		return nil, 0, err
	}
	res, err := fn(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, 0, err
	}
	return res.Msg, http.StatusOK, nil
}

func (s *Server) exportRoute(sessions *sessionService) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		format := queryOf(r).Get("format")
		if format == "md" {
			format = "markdown"
		}
		n, err := queryEnum(format, "format", agentsv1.ExportFormat(0).Descriptor())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		req := &agentsv1.ExportSessionRequest{SessionId: r.PathValue("id"), Format: agentsv1.ExportFormat(n)}
		res, _, err := unary(r.Context(), s, req, sessions.ExportSession)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", res.GetContentType())
		_, _ = w.Write([]byte(res.GetContent()))
	}
}

func listRequest(r *http.Request) (*agentsv1.ListSessionsRequest, error) {
	q := queryOf(r)
	// The query is the field query; name it as this route spells it.
	if err := checkChars("q", q.Get("q"), maxQueryChars); err != nil {
		return nil, err
	}
	req := &agentsv1.ListSessionsRequest{
		Agent:     q.Get("agent"),
		ParentId:  q.Get("parent"),
		Query:     q.Get("q"),
		PageToken: q.Get("page_token"),
	}
	status, err := queryEnum(q.Get("status"), "status", agentsv1.SessionStatus(0).Descriptor())
	if err != nil {
		return nil, err
	}
	req.Status = agentsv1.SessionStatus(status)
	if req.RootsOnly, err = queryBool(q.Get("roots"), "roots"); err != nil {
		return nil, err
	}
	if l := q.Get("limit"); l != "" {
		n, err := parseInt(l, "limit")
		if err != nil {
			return nil, err
		}
		if n < 0 || n > store.MaxPageSize {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "query parameter `limit` must be from 0 (the default, %d) to %d, not %d", store.DefaultPageSize, store.MaxPageSize, n)
		}
		req.PageSize = int32(n)
	}
	switch scope := q.Get("scope"); scope {
	case "", "owner":
	case "all":
		req.AllOwners = true
	default:
		return nil, errs.Invalid(errs.CodeInvalidArgument, "query parameter `scope` must be owner or all, not %q", scope)
	}
	return req, nil
}

// usageRequest is the GetOwnerUsage request of GET
// /v1/owners/{owner}/usage.
func usageRequest(r *http.Request) (*agentsv1.GetOwnerUsageRequest, error) {
	q := queryOf(r)
	req := &agentsv1.GetOwnerUsageRequest{Owner: r.PathValue("owner")}
	bucket, err := queryEnum(q.Get("bucket"), "bucket", agentsv1.UsageBucket(0).Descriptor())
	if err != nil {
		return nil, err
	}
	req.Bucket = agentsv1.UsageBucket(bucket)
	for _, f := range []struct {
		name string
		dst  **timestamppb.Timestamp
	}{{"since", &req.Since}, {"until", &req.Until}} {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "query parameter `%s` must be an RFC 3339 time such as 2026-03-01T00:00:00Z, not %q", f.name, v)
		}
		*f.dst = timestamppb.New(t)
	}
	if req.AllOwners, err = queryBool(q.Get("all_owners"), "all_owners"); err != nil {
		return nil, err
	}
	return req, nil
}

// getRequest is the GetSession request of GET /v1/sessions/{id}.
func getRequest(r *http.Request) (*agentsv1.GetSessionRequest, error) {
	q := queryOf(r)
	req := &agentsv1.GetSessionRequest{SessionId: r.PathValue("id")}
	if err := queryWait(r, &req.Wait, &req.Timeout); err != nil {
		return nil, err
	}
	switch view := q.Get("view"); view {
	case "", "full":
	case "meta":
		req.MetaOnly = true
	default:
		return nil, errs.Invalid(errs.CodeInvalidArgument, "query parameter `view` must be full or meta, not %q", view)
	}
	// Each parameter is read in turn, without a table of setters: this is
	// every waiting GET's path, and closures are allocations.
	for _, name := range [...]string{"after_turn", "before_turn", "limit", "last"} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		n, err := parseInt(v, name)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "query parameter `%s` must be 0 or more, not %d", name, n)
		}
		if n > math.MaxInt32 {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "query parameter `%s` must be at most %d, not %d", name, math.MaxInt32, n)
		}
		switch name {
		case "after_turn":
			req.AfterTurn = proto.Int32(int32(n))
		case "before_turn":
			req.BeforeTurn = proto.Int32(int32(n))
		case "limit":
			req.TurnLimit = int32(n)
		case "last":
			req.LastTurns = int32(n)
		}
	}
	return req, nil
}

// queryWait reads the wait and timeout query parameters into a request's
// fields; each, when present, wins over the body.
func queryWait(r *http.Request, wait *bool, timeout **durationpb.Duration) error {
	q := queryOf(r)
	if v := q.Get("wait"); v != "" {
		b, err := queryBool(v, "wait")
		if err != nil {
			return err
		}
		*wait = b
	}
	if t := q.Get("timeout"); t != "" {
		d, err := parseDuration(t, "timeout")
		if err != nil {
			return err
		}
		*timeout = durationpb.New(d)
	}
	return nil
}

// fromPath sets a request's field to what the route's path gives it. A
// body may give the field too, but only the same: neither silently wins.
func fromPath(r *http.Request, key, field string, to *string) error {
	v := r.PathValue(key)
	if *to != "" && *to != v {
		return errs.Invalid(errs.CodeInvalidArgument, "field `%s` is %q, but the path names %q: leave it out of the body", field, *to, v)
	}
	*to = v
	return nil
}

// idempotencyKey sets *key, the body's idempotency_key, to the request's
// key: its Idempotency-Key header or the body's. Two different keys name
// two requests, and neither may win in silence (as for any value given
// twice): refused.
func idempotencyKey(r *http.Request, key *string) error {
	header := r.Header.Get("Idempotency-Key")
	switch {
	case header == "":
	case *key != "" && *key != header:
		return errs.Invalid(errs.CodeInvalidArgument, "the Idempotency-Key header %q and the body's idempotency_key %q differ: give the key once", header, *key)
	default:
		*key = header
	}
	return nil
}

// readDefinition reads a body that is an agent file's JSON, as it is.
func readDefinition(r *http.Request) (string, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return "", errs.TooLarge(errs.CodeBodyTooLarge, "request body is larger than %d bytes", tooLarge.Limit)
		}
		return "", errs.Invalid(errs.CodeInvalidArgument, "read body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return "", errs.Invalid(errs.CodeInvalidArgument, "the body is the agent's definition: an agent file's JSON (curl --json @agent.json)")
	}
	return string(body), nil
}

// queryVersion reads the expected_version parameter; absent is nil.
func queryVersion(r *http.Request) (*int64, error) {
	v := queryOf(r).Get("expected_version")
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "query parameter `expected_version` must be a version (1, 2, …), not %q", v)
	}
	return &n, nil
}

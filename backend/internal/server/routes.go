package server

import (
	"context"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
)

// routes mounts the plain JSON routes of DESIGN §3. Each decodes into the
// same request message as its RPC and calls the same handler, so the two
// surfaces cannot drift apart.
func (s *Server) routes(mux *http.ServeMux) {
	agents := &agentService{s: s}
	sessions := &sessionService{s: s}

	mux.HandleFunc("GET /v1/agents", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		return unary(r.Context(), &agentsv1.ListAgentsRequest{}, agents.ListAgents)
	}))
	mux.HandleFunc("GET /v1/agents/{slug}", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		res, _, err := unary(r.Context(), &agentsv1.GetAgentRequest{Slug: r.PathValue("slug")}, agents.GetAgent)
		return res.GetAgent(), http.StatusOK, err
	}))
	mux.HandleFunc("POST /v1/agents:reload", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		return unary(r.Context(), &agentsv1.ReloadAgentsRequest{}, agents.ReloadAgents)
	}))

	mux.HandleFunc("POST /v1/sessions", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		req := &agentsv1.CreateSessionRequest{}
		if err := decodeBody(r, req); err != nil {
			return nil, 0, err
		}
		res, _, err := unary(r.Context(), req, sessions.CreateSession)
		if err != nil {
			return nil, 0, err
		}
		w.Header().Set("Location", "/v1/sessions/"+res.GetSession().GetMeta().GetId())
		return res, http.StatusCreated, nil
	}))
	mux.HandleFunc("GET /v1/sessions", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		req, err := listRequest(r)
		if err != nil {
			return nil, 0, err
		}
		return unary(r.Context(), req, sessions.ListSessions)
	}))
	mux.HandleFunc("GET /v1/sessions/{id}", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		q := r.URL.Query()
		req := &agentsv1.GetSessionRequest{SessionId: r.PathValue("id")}
		wait, err := queryBool(q.Get("wait"), "wait")
		if err != nil {
			return nil, 0, err
		}
		req.Wait = wait
		if t := q.Get("timeout"); t != "" {
			d, err := parseDuration(t, "timeout")
			if err != nil {
				return nil, 0, err
			}
			req.Timeout = durationpb.New(d)
		}
		return unary(r.Context(), req, sessions.GetSession)
	}))
	mux.HandleFunc("DELETE /v1/sessions/{id}", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		req := &agentsv1.DeleteSessionRequest{SessionId: r.PathValue("id")}
		switch mode := r.URL.Query().Get("mode"); mode {
		case "", "single":
			req.Mode = agentsv1.DeleteMode_DELETE_MODE_SINGLE
		case "cascade":
			req.Mode = agentsv1.DeleteMode_DELETE_MODE_CASCADE
		default:
			return nil, 0, errs.Invalid("invalid_argument", "mode %q: want single or cascade", mode)
		}
		return unary(r.Context(), req, sessions.DeleteSession)
	}))
	mux.HandleFunc("POST /v1/sessions/{id}/messages", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		msg := &agentsv1.Message{}
		if err := decodeBody(r, msg); err != nil {
			return nil, 0, err
		}
		return unary(r.Context(), &agentsv1.PostMessageRequest{SessionId: r.PathValue("id"), Message: msg}, sessions.PostMessage)
	}))
	mux.HandleFunc("POST /v1/sessions/{id}/cancel", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		return unary(r.Context(), &agentsv1.CancelRunRequest{SessionId: r.PathValue("id")}, sessions.CancelRun)
	}))
	mux.HandleFunc("POST /v1/sessions/{id}/cancel-attached", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		return unary(r.Context(), &agentsv1.CancelAttachedRequest{SessionId: r.PathValue("id")}, sessions.CancelAttached)
	}))
	mux.HandleFunc("POST /v1/sessions/{id}/pause", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		return unary(r.Context(), &agentsv1.PauseRequest{SessionId: r.PathValue("id")}, sessions.Pause)
	}))
	mux.HandleFunc("POST /v1/sessions/{id}/resume", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		req := &agentsv1.ResumeRequest{}
		if err := decodeBody(r, req); err != nil {
			return nil, 0, err
		}
		req.SessionId = r.PathValue("id")
		return unary(r.Context(), req, sessions.Resume)
	}))
	mux.HandleFunc("POST /v1/sessions/{id}/mail", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		req := &agentsv1.SendMailRequest{}
		if err := decodeBody(r, req); err != nil {
			return nil, 0, err
		}
		req.SessionId = r.PathValue("id")
		res, _, err := unary(r.Context(), req, sessions.SendMail)
		return res, http.StatusCreated, err
	}))
	mux.HandleFunc("GET /v1/sessions/{id}/mail", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		pending, err := queryBool(r.URL.Query().Get("pending"), "pending")
		if err != nil {
			return nil, 0, err
		}
		return unary(r.Context(), &agentsv1.ListMailRequest{SessionId: r.PathValue("id"), PendingOnly: pending}, sessions.ListMail)
	}))
	mux.HandleFunc("POST /v1/sessions/{id}/fork", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		req := &agentsv1.ForkSessionRequest{}
		if err := decodeBody(r, req); err != nil {
			return nil, 0, err
		}
		req.SessionId = r.PathValue("id")
		res, _, err := unary(r.Context(), req, sessions.ForkSession)
		if err != nil {
			return nil, 0, err
		}
		w.Header().Set("Location", "/v1/sessions/"+res.GetSession().GetMeta().GetId())
		return res, http.StatusCreated, nil
	}))
	mux.HandleFunc("POST /v1/sessions/{id}/watch", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		req := &agentsv1.WatchSessionRequest{}
		if err := decodeBody(r, req); err != nil {
			return nil, 0, err
		}
		req.WatcherId = r.PathValue("id")
		return unary(r.Context(), req, sessions.WatchSession)
	}))
	mux.HandleFunc("DELETE /v1/sessions/{id}/watch/{target}", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		return unary(r.Context(), &agentsv1.UnwatchSessionRequest{WatcherId: r.PathValue("id"), TargetId: r.PathValue("target")}, sessions.UnwatchSession)
	}))
	mux.HandleFunc("POST /v1/calls/{token}/complete", s.jsonRoute(func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error) {
		req := &agentsv1.CompleteCallRequest{}
		if err := decodeBody(r, req); err != nil {
			return nil, 0, err
		}
		req.Token = r.PathValue("token")
		return unary(r.Context(), req, sessions.CompleteCall)
	}))
	mux.HandleFunc("GET /v1/sessions/{id}/export", s.exportRoute(sessions))

	mux.HandleFunc("GET /v1/events", s.sseRoute(false))
	mux.HandleFunc("GET /v1/sessions/{id}/events", s.sseRoute(true))
}

// unary calls a Connect handler method with a request message.
func unary[Req, Res any](ctx context.Context, req *Req, fn func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error)) (*Res, int, error) {
	res, err := fn(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, 0, err
	}
	return res.Msg, http.StatusOK, nil
}

func (s *Server) exportRoute(sessions *sessionService) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req := &agentsv1.ExportSessionRequest{SessionId: r.PathValue("id")}
		switch format := r.URL.Query().Get("format"); format {
		case "", "markdown", "md":
			req.Format = agentsv1.ExportFormat_EXPORT_FORMAT_MARKDOWN
		case "json":
			req.Format = agentsv1.ExportFormat_EXPORT_FORMAT_JSON
		default:
			s.writeError(w, r, errs.Invalid("invalid_argument", "format %q: want markdown or json", format))
			return
		}
		res, _, err := unary(r.Context(), req, sessions.ExportSession)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", res.GetContentType())
		_, _ = w.Write([]byte(res.GetContent()))
	}
}

func listRequest(r *http.Request) (*agentsv1.ListSessionsRequest, error) {
	q := r.URL.Query()
	req := &agentsv1.ListSessionsRequest{
		Agent:     q.Get("agent"),
		ParentId:  q.Get("parent"),
		Query:     q.Get("q"),
		PageToken: q.Get("page_token"),
	}
	if st := q.Get("status"); st != "" {
		v, ok := agentsv1.SessionStatus_value["SESSION_STATUS_"+strings.ToUpper(st)]
		if !ok || v == 0 {
			return nil, errs.Invalid("invalid_argument", "status %q: want ready, running, waiting, paused or failed", st)
		}
		req.Status = agentsv1.SessionStatus(v)
	}
	var err error
	if req.RootsOnly, err = queryBool(q.Get("roots"), "roots"); err != nil {
		return nil, err
	}
	if l := q.Get("limit"); l != "" {
		n, err := parseInt(l, "limit")
		if err != nil {
			return nil, err
		}
		req.PageSize = int32(n)
	}
	switch scope := q.Get("scope"); scope {
	case "", "owner":
	case "all":
		req.AllOwners = true
	default:
		return nil, errs.Invalid("invalid_argument", "scope %q: want owner or all", scope)
	}
	return req, nil
}

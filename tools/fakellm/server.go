package fakellm

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// maxRequestBody bounds what the server reads of one request; long agent
// conversations fit comfortably.
const maxRequestBody = 64 << 20

// Server answers OpenAI chat-completions requests from rules and records
// them. It is an http.Handler serving:
//
//	POST /v1/chat/completions   answers from the rules
//	GET  /v1/models             lists the rules' model
//	GET  /fakellm/requests      the recorded requests, as a JSON array
//	POST /fakellm/reset         same as Reset
//
// Its methods are safe for concurrent use.
type Server struct {
	rules     *compiledRules
	onRequest func(Request)
	mux       *http.ServeMux

	mu          sync.Mutex
	requests    []Request
	received    int   // chat requests received: the next Request.Index
	ruleUses    []int // per rule, how many times it answered (for Rule.Times)
	callsIssued int   // generated tool-call ids so far
	// changed is closed, and replaced, whenever requests changes, to wake
	// WaitRequests.
	changed chan struct{}
}

// Option configures a Server.
type Option func(*Server)

// OnRequest makes the server call fn with every chat request as soon as it
// is recorded, before any delay. Calls may run concurrently when requests
// do.
func OnRequest(fn func(Request)) Option {
	return func(s *Server) { s.onRequest = fn }
}

// New returns a server answering from rules. It panics when rules are
// invalid (see Rules.Validate); rules from ParseRules and LoadRules are
// always valid.
func New(rules Rules, opts ...Option) *Server {
	s := &Server{rules: mustCompile(rules), changed: make(chan struct{})}
	s.ruleUses = make([]int, len(s.rules.rules))
	for _, opt := range opts {
		opt(s)
	}
	s.mux = http.NewServeMux()
	s.route("POST", "/v1/chat/completions", s.handleChat)
	s.route("GET", "/v1/models", s.handleModels)
	s.route("GET", "/fakellm/requests", s.handleRequests)
	s.route("POST", "/fakellm/reset", s.handleReset)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, errorType(http.StatusNotFound), fmt.Sprintf("fakellm: no route for %s %s", r.Method, r.URL.Path))
	})
	return s
}

// route serves path for one method and answers other methods with 405
// (the catch-all 404 route would otherwise take them).
func (s *Server) route(method, path string, handler http.HandlerFunc) {
	s.mux.HandleFunc(method+" "+path, handler)
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", method)
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", fmt.Sprintf("fakellm: %s %s: use %s", r.Method, path, method))
	})
}

// ServeHTTP serves the routes listed on Server.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "fakellm: reading body: "+err.Error())
		return
	}
	req := Request{Header: r.Header.Clone(), Body: body}
	if err := req.decodeBody(); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "fakellm: "+err.Error())
		return
	}
	if err := req.checkRequired(); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "fakellm: "+err.Error())
		return
	}
	reply, firstCallNumber := s.admit(&req)
	if s.onRequest != nil {
		s.onRequest(req)
	}
	if req.ContextExceeded() {
		// A provider measures the prompt before anything else, so the
		// refusal comes at once, before any scripted delay or stream.
		writeContextLengthExceeded(w, req)
		return
	}
	a := reply.render(req, firstCallNumber, time.Now().Unix())

	ctx := r.Context()
	if sleep(ctx, reply.initialDelay) != nil {
		return
	}
	switch {
	case reply.err != nil:
		writeHTTPError(w, *reply.err)
	case !req.Stream && reply.disconnectAfterChunks > 0:
		panic(http.ErrAbortHandler) // drops the connection without a response
	case !req.Stream:
		writeJSON(w, http.StatusOK, a.completion())
	default:
		if err := stream(ctx, w, a, reply, req.IncludeUsage); errors.Is(err, errDisconnect) {
			panic(http.ErrAbortHandler)
		}
	}
}

// checkRequired rejects requests a real provider would reject, so that a
// client bug shows up in tests rather than against the provider.
func (r Request) checkRequired() error {
	if r.Model == "" {
		return errors.New("request body: model is required")
	}
	if len(r.Messages) == 0 {
		return errors.New("request body: messages must not be empty")
	}
	return nil
}

// admit numbers req, picks the reply (the first rule that matches and has
// uses left, else the built-in summary for a compaction request or the
// default), sets the context window that applies, and records req, all
// under one lock so that concurrent requests get distinct indexes and
// never overdraw Times. A request over its window uses up nothing: the
// rule did not answer, so the retry after compacting finds it again.
func (s *Server) admit(req *Request) (reply compiledReply, firstCallNumber int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Index = s.received
	s.received++
	req.Rule, reply = -1, s.rules.fallback
	if req.IsCompaction() {
		reply = s.rules.summary
	}
	req.ContextWindow = s.rules.contextWindow
	chosen := -1
	for i, rule := range s.rules.rules {
		if rule.times > 0 && s.ruleUses[i] >= rule.times {
			continue
		}
		if rule.match.matches(*req) {
			chosen = i
			req.Rule, req.RuleName, reply = i, rule.name, rule.reply
			if rule.contextWindow > 0 {
				req.ContextWindow = rule.contextWindow
			}
			break
		}
	}
	if !req.ContextExceeded() {
		if chosen >= 0 {
			s.ruleUses[chosen]++
		}
		firstCallNumber = s.callsIssued + 1
		s.callsIssued += reply.generatedIDs()
	}
	s.record(*req)
	return reply, firstCallNumber
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, wireModelList{
		Object: "list",
		Data:   []wireModel{{ID: s.rules.model, Object: "model", OwnedBy: "fakellm"}},
	})
}

func (s *Server) handleRequests(w http.ResponseWriter, _ *http.Request) {
	requests := s.Requests()
	if requests == nil {
		requests = []Request{} // an empty list, not null
	}
	writeJSON(w, http.StatusOK, requests)
}

func (s *Server) handleReset(w http.ResponseWriter, _ *http.Request) {
	s.Reset()
	w.WriteHeader(http.StatusNoContent)
}

package server

import (
	"fmt"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"github.com/agents-os/agents/backend/internal/errs"
)

// jsonErrors makes the answers nothing in the API writes itself JSON
// too: the mux's 404 for a route that does not exist and its 405 for a
// method a route does not take (Allow kept), and connect-go's 415 for a
// Content-Type it does not read, which otherwise come as plain text or
// with no body at all.
func jsonErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, r := withState(r)
		rw := &st.rewriter
		if rw.ResponseWriter != nil {
			// The request passed here already (nothing sends one through
			// twice today): the state's writer is the outer one.
			rw = &errorRewriter{}
		}
		*rw = errorRewriter{ResponseWriter: w, r: r}
		next.ServeHTTP(rw, r)
	})
}

// errorRewriter replaces a 404, 405 or 415 that is not JSON already with
// an error body, and drops what the handler writes after it.
type errorRewriter struct {
	http.ResponseWriter
	r         *http.Request
	rewritten bool
}

func (w *errorRewriter) WriteHeader(status int) {
	body, ok := w.errorFor(status)
	if !ok {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.rewritten = true
	h := w.Header()
	h.Del("Content-Length")
	h.Del("X-Content-Type-Options")
	writeErrorBody(w.ResponseWriter, status, body)
}

func (w *errorRewriter) Write(b []byte) (int, error) {
	if w.rewritten {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *errorRewriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush serves the handlers that flush through http.Flusher (connect-go's
// streams).
func (w *errorRewriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *errorRewriter) errorFor(status int) (errorBody, bool) {
	if ct := w.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		return errorBody{}, false
	}
	r := w.r
	switch status {
	case http.StatusNotFound:
		return errorBody{
			Code: connect.CodeNotFound.String(), Reason: errs.CodeUnknownRoute,
			Message: fmt.Sprintf("no route %s %s: /openapi.json lists the routes", r.Method, r.URL.Path),
		}, true
	case http.StatusMethodNotAllowed:
		allow := w.Header().Get("Allow")
		msg := fmt.Sprintf("%s is not served on %s", r.Method, r.URL.Path)
		if allow != "" {
			msg += "; it takes " + strings.ReplaceAll(allow, ", ", " or ")
		}
		return errorBody{Code: connect.CodeUnimplemented.String(), Reason: errs.CodeMethodNotAllowed, Message: msg}, true
	case http.StatusUnsupportedMediaType:
		connectTypes := "application/json and application/proto"
		if strings.Contains(w.Header().Get("Accept-Post"), "application/connect+") {
			// A streaming procedure (Subscribe): Connect frames its
			// messages, and says so in the type.
			connectTypes = "application/connect+json and application/connect+proto"
		}
		return errorBody{
			Code: connect.CodeInvalidArgument.String(), Reason: errs.CodeUnsupportedMediaType,
			Message: fmt.Sprintf("Content-Type %q is not read on %s: the Connect protocol reads %s, gRPC application/grpc, gRPC-Web application/grpc-web", r.Header.Get("Content-Type"), r.URL.Path, connectTypes),
		}, true
	}
	return errorBody{}, false
}

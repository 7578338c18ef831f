package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agents-os/agents/backend/internal/errs"
)

// maxBody bounds a JSON request body.
const maxBody = 16 << 20

var (
	protoJSON   = protojson.MarshalOptions{}
	protoDecode = protojson.UnmarshalOptions{}
)

// jsonRoute adapts a function returning a message to a JSON route: the
// message is written with the given status, an error as {"code", "reason",
// "message"} with the status of its kind.
func (s *Server) jsonRoute(fn func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		msg, status, err := fn(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		b, err := protoJSON.Marshal(msg)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(b)
	}
}

// errorBody is the JSON error of the plain routes.
type errorBody struct {
	// Code is the Connect code (not_found, invalid_argument, …).
	Code string `json:"code"`
	// Reason is the stable machine code (unknown_session, …).
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Metadata carries extra facts (missing params, …).
	Metadata map[string]string `json:"metadata,omitempty"`
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := publicError(r.Context(), err)
	if !noteError(r.Context(), e.code.String(), err) {
		s.log.Log(r.Context(), levelOf(e.code), "http", "method", r.Method, "path", r.URL.Path, "status", e.status, "code", e.code.String(), "error", err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(errorBody{
		Code:     e.code.String(),
		Reason:   e.reason,
		Message:  e.message,
		Metadata: e.metadata,
	})
}

// decodeBody reads a JSON body into msg; an empty body leaves it empty.
// Unknown fields are refused so a misspelt field is not silently ignored.
func decodeBody(r *http.Request, msg proto.Message) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errs.TooLarge("body_too_large", "request body is larger than %d bytes", tooLarge.Limit)
		}
		return errs.Invalid("invalid_argument", "read body: %v", err)
	}
	if len(body) == 0 {
		return nil
	}
	if err := protoDecode.Unmarshal(body, msg); err != nil {
		return errs.Invalid("invalid_argument", "invalid JSON body: %v", err)
	}
	return nil
}

func queryBool(v, name string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errs.Invalid("invalid_argument", "%s %q: want true or false", name, v)
	}
	return b, nil
}

func parseInt(v, name string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errs.Invalid("invalid_argument", "%s %q: want a whole number", name, v)
	}
	return n, nil
}

func parseDuration(v, name string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, errs.Invalid("invalid_argument", "%s %q: want a duration such as 30s", name, v)
	}
	return d, nil
}

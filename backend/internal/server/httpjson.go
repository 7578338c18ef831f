package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/errs"
)

// maxBody bounds a JSON request body.
const maxBody = 16 << 20

// jsonRoute adapts a function returning a message to a JSON route: the
// message is written in the routes' representation (apijson) with the
// given status, an error as {"code", "reason", "message"} with the status
// of its kind.
func (s *Server) jsonRoute(fn func(w http.ResponseWriter, r *http.Request) (proto.Message, int, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// A handler answering with a session leaves its turns in the slot,
		// to be written from the turn cache (sessionFor).
		st, r := withState(r)
		st.slot, st.slotted = sessionSlot{}, true
		slot := &st.slot
		msg, status, err := fn(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		buf := answerBuffers.Get().(*[]byte)
		defer putAnswerBuffer(buf)
		b := (*buf)[:0]
		if slot.session != nil {
			b, err = appendSession(b, msg, slot)
		} else {
			b, err = apijson.AppendReplacing(b, msg, nil)
		}
		*buf = b
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header()["Content-Type"] = jsonContentType
		w.WriteHeader(status)
		*buf = append(b, '\n')
		_, _ = w.Write(*buf)
	}
}

// jsonContentType is the Content-Type of the JSON answers, assigned
// rather than set: Header.Set makes a slice for the value every time.
// Nothing changes a header's values in place.
var jsonContentType = []string{"application/json"}

// An answer is encoded into a buffer kept from earlier answers and
// written from it: the response copies what it is written, so the
// answer needs no allocation of its own. Buffers grown past
// maxAnswerBuffer (a long session's) are left to the collector.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxAnswerBuffer = 64 << 10

func putAnswerBuffer(buf *[]byte) {
	if cap(*buf) <= maxAnswerBuffer {
		answerBuffers.Put(buf)
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
	writeErrorBody(w, e.status, errorBody{Code: e.code.String(), Reason: e.reason, Message: e.message, Metadata: e.metadata})
}

func writeErrorBody(w http.ResponseWriter, status int, body errorBody) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
}

// decodeBody reads a JSON body into msg; an empty body leaves it empty.
// Unknown fields are refused so a misspelt field is not silently ignored.
func decodeBody(r *http.Request, msg proto.Message) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errs.TooLarge(errs.CodeBodyTooLarge, "request body is larger than %d bytes", tooLarge.Limit)
		}
		return errs.Invalid(errs.CodeInvalidArgument, "read body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := apijson.Unmarshal(body, msg); err != nil {
		return errs.Invalid(errs.CodeInvalidArgument, "%v", err)
	}
	return nil
}

// noBody refuses a body on a route that reads none (cancel, pause, a
// DELETE), unless it is empty or {}: what it asks would be ignored, and
// the request done without it.
func noBody(r *http.Request) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxShortBody))
	if err != nil {
		return errs.Invalid(errs.CodeInvalidArgument, "read body: %v", err)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		return errs.Invalid(errs.CodeInvalidArgument, "this route takes no body: send none, or {}")
	}
	if len(obj) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(obj))
	return errs.Invalid(errs.CodeInvalidArgument, "field `%s` is not a field here: this route takes no body", keys[0])
}

// isJSON reports whether a Content-Type is JSON; none at all is taken as
// JSON, so a bare `curl -X POST` with no body passes.
func isJSON(contentType string) bool {
	if contentType == "" || contentType == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// canonicalQuery checks a route's query against the parameters it takes,
// refusing unknown ones as unknown body fields are, and spells each the
// way the route reads it: snake_case, though camelCase (camel[i] for
// params[i]) is accepted too. respelt says whether any key was respelt:
// when none was, the query is already as the route reads it.
func canonicalQuery(q url.Values, params []param, camel []string) (out url.Values, respelt bool, err error) {
	for key := range q {
		i := slices.IndexFunc(params, func(p param) bool { return p.name == key })
		if i >= 0 {
			continue
		}
		if i = slices.Index(camel, key); i >= 0 && q.Has(params[i].name) {
			return nil, false, errs.Invalid(errs.CodeInvalidArgument, "query parameter `%s` is given twice, as %s and as %s: give it once", params[i].name, params[i].name, key)
		}
		if i < 0 {
			names := make([]string, len(params))
			for j, p := range params {
				names[j] = p.name
			}
			if len(names) == 0 {
				return nil, false, errs.Invalid(errs.CodeInvalidArgument, "query parameter `%s` is not taken here: this route takes none", key)
			}
			return nil, false, errs.Invalid(errs.CodeInvalidArgument, "query parameter `%s` is not taken here; the parameters are %s", key, strings.Join(names, ", "))
		}
		respelt = true
	}
	if !respelt {
		return q, false, nil
	}
	out = url.Values{}
	for key, values := range q {
		name := key
		if i := slices.Index(camel, key); i >= 0 {
			name = params[i].name
		}
		out[name] = append(out[name], values...)
	}
	return out, true, nil
}

func queryBool(v, name string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errs.Invalid(errs.CodeInvalidArgument, "query parameter `%s` must be true or false, not %q", name, v)
	}
	return b, nil
}

func parseInt(v, name string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errs.Invalid(errs.CodeInvalidArgument, "query parameter `%s` must be a whole number, not %q", name, v)
	}
	return n, nil
}

func parseDuration(v, name string) (time.Duration, error) {
	d, ok := apijson.ParseDuration(v)
	if !ok || d < 0 {
		return 0, errs.Invalid(errs.CodeInvalidArgument, "query parameter `%s` must be a duration such as 30s or 10m, or a number of seconds, not %q", name, v)
	}
	return d, nil
}

// queryEnum reads an enum parameter in any form a body takes (cascade,
// DELETE_MODE_CASCADE); "" is the enum's unset value.
func queryEnum(v, name string, ed protoreflect.EnumDescriptor) (protoreflect.EnumNumber, error) {
	if v == "" {
		return 0, nil
	}
	n, ok := apijson.ParseEnum(ed, v)
	if !ok {
		return 0, errs.Invalid(errs.CodeInvalidArgument, "query parameter `%s` must be one of %s, not %q", name, strings.Join(apijson.EnumNames(ed), ", "), v)
	}
	return n, nil
}

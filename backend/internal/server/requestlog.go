package server

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"connectrpc.com/connect"
)

// requestRecord collects what the layers of one request learn about it, so
// that exactly one log line (and one metric sample) describes the request
// however it ended: refused by a guard, failed in a handler, or served.
// Each field is written by one layer, all on the request's goroutine.
type requestRecord struct {
	// owner is set by the authentication layer.
	owner string
	// procedure is the Connect procedure, set by the interceptor.
	procedure string
	// pattern is the mux pattern that matched, set around the mux.
	pattern string
	// code is the Connect code of an RPC or of a JSON route's error.
	code string
	// err is the full error, for the log only: clients never see it.
	err error
}

// recordOf returns the record of ctx's request, nil when the request
// layer does not log it.
func recordOf(ctx context.Context) *requestRecord {
	if st := stateOf(ctx); st != nil && st.recorded {
		return &st.record
	}
	return nil
}

// noteError records a handler's error for the request's log line. It
// reports false when the request is not being recorded.
func noteError(ctx context.Context, code string, err error) bool {
	rec := recordOf(ctx)
	if rec == nil {
		return false
	}
	rec.code, rec.err = code, err
	return true
}

// statusWriter remembers the status a handler wrote. It unwraps for
// http.ResponseController, so deadlines and flushing (SSE) still work.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush is there because Connect's streams look for http.Flusher on the
// writer itself rather than through http.ResponseController.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests writes one line per request: method, path (never the query,
// which may hold an access token), procedure or route, status, code, owner
// and duration. Client errors log at INFO, server errors at ERROR. It also
// feeds the request metrics.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if isProbe(r) {
			s.probed.Add(1)
		} else {
			s.served.Add(1)
			s.open.Add(1)
			defer func() { s.open.Add(-1); s.served.Add(1) }()
		}
		st := &requestState{recorded: true}
		rec, sw := &st.record, &st.status
		sw.ResponseWriter = w
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), requestStateKey{}, st)))
		elapsed := time.Since(start)

		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		code := rec.code
		if code == "" {
			code = codeOfResponse(status, sw.Header())
		}
		procedure := rec.procedure
		if procedure == "" {
			procedure = rec.pattern
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.String("procedure", procedure),
			slog.Int("status", status),
			slog.String("code", code),
			slog.String("owner", rec.owner),
			slog.Duration("duration", elapsed),
		}
		if rec.err != nil {
			attrs = append(attrs, slog.String("error", rec.err.Error()))
		}
		// The line goes to the handler as Logger.LogAttrs would send it,
		// without the caller's program counter, which it looks up on
		// every call and only a handler with AddSource writes (none does:
		// this line's would always name this function).
		if level, h := levelOfCode(code), s.log.Handler(); h.Enabled(r.Context(), level) {
			line := slog.NewRecord(time.Now(), level, "request", 0)
			line.AddAttrs(attrs...)
			_ = h.Handle(r.Context(), line)
		}
		if s.metrics != nil {
			s.metrics.observeRequest(procedure, code, elapsed)
		}
	})
}

// isProbe reports whether r is a liveness or readiness probe or a metrics
// scrape: what an orchestrator and a monitor send every few seconds
// whether or not anyone uses the server, so it is not activity. They are
// still logged and measured.
func isProbe(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch r.URL.Path {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return false
}

// Activity says whether the server served anything between two calls:
// served changes with every request that begins or ends, probes and
// scrapes aside (isProbe), which change probed instead; open is the
// number of requests under way (event streams included).
func (s *Server) Activity() (served, probed uint64, open int64) {
	return s.served.Load(), s.probed.Load(), s.open.Load()
}

// recordPattern notes which mux pattern served the request: the mux sets
// it on the request it is handed, which is this layer's own.
func recordPattern(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r)
		if rec := recordOf(r.Context()); rec != nil && rec.procedure == "" {
			rec.pattern = r.Pattern
		}
	})
}

// codeOfResponse names the Connect code of a response that ended without
// a handler's error: a guard's refusal, the mux's 404 or 405, a refusal
// of the Connect protocol layer (415 for a Content-Type it does not read,
// say), or a gRPC error, whose status is 200 and whose code is in the
// grpc-status header or trailer.
func codeOfResponse(status int, header http.Header) string {
	if status == http.StatusOK {
		for _, key := range []string{"Grpc-Status", http.TrailerPrefix + "Grpc-Status"} {
			if v := header.Get(key); v != "" {
				if n, err := strconv.ParseUint(v, 10, 32); err == nil {
					if n == 0 {
						return "ok"
					}
					return connect.Code(n).String()
				}
			}
		}
	}
	return codeOfStatus(status)
}

// codeOfStatus names the Connect code of an HTTP status.
func codeOfStatus(status int) string {
	switch {
	case status < 400:
		return "ok"
	case status == http.StatusNotFound:
		return connect.CodeNotFound.String()
	case status == http.StatusMethodNotAllowed, status == http.StatusNotImplemented:
		return connect.CodeUnimplemented.String()
	case status == http.StatusUnsupportedMediaType:
		return connect.CodeInvalidArgument.String()
	case status == http.StatusRequestTimeout, status == deadlineRow.status:
		return connect.CodeDeadlineExceeded.String()
	case status == http.StatusRequestEntityTooLarge, status == http.StatusTooManyRequests:
		return connect.CodeResourceExhausted.String()
	case status == canceledRow.status:
		return connect.CodeCanceled.String()
	case status == http.StatusBadGateway, status == http.StatusServiceUnavailable:
		return connect.CodeUnavailable.String()
	}
	for _, row := range kindTable {
		if row.status == status {
			return row.code.String()
		}
	}
	if status >= 500 {
		return connect.CodeInternal.String()
	}
	// Any other 4xx is a request the server could not take as it was.
	return connect.CodeInvalidArgument.String()
}

// levelOfCode logs server faults at ERROR and everything else at INFO.
func levelOfCode(code string) slog.Level {
	if code == "ok" {
		// Most requests: spared connect's parse, whose error for "ok"
		// is formatted every time.
		return slog.LevelInfo
	}
	var c connect.Code
	if err := c.UnmarshalText([]byte(code)); err != nil {
		return slog.LevelInfo
	}
	return levelOf(c)
}

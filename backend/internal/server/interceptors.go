package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"connectrpc.com/connect"
)

// errorInterceptor converts domain errors returned by handlers into Connect
// errors with a machine code, and records procedure and code for the
// request's log line (see logRequests), which carries the owner and the
// duration too. The full text of internal errors goes to the log only.
type errorInterceptor struct{ log *slog.Logger }

var _ connect.Interceptor = errorInterceptor{}

func (i errorInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		start := time.Now()
		res, err := next(ctx, req)
		i.record(ctx, req.Spec().Procedure, start, err)
		return res, connectError(ctx, err)
	}
}

func (i errorInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i errorInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		start := time.Now()
		err := next(ctx, conn)
		i.record(ctx, conn.Spec().Procedure, start, err)
		return connectError(ctx, err)
	}
}

// record notes the call's procedure and outcome for the request's log
// line; a call served without the request layer (a test calling the
// handler directly) gets a line of its own.
func (i errorInterceptor) record(ctx context.Context, procedure string, start time.Time, err error) {
	code, level := "ok", slog.LevelInfo
	if err != nil {
		c := connect.CodeOf(connectError(ctx, err))
		code, level = c.String(), levelOf(c)
	}
	if rec := recordOf(ctx); rec != nil {
		rec.procedure, rec.code, rec.err = procedure, code, err
		return
	}
	attrs := []slog.Attr{
		slog.String("procedure", procedure),
		slog.String("code", code),
		slog.Duration("duration", time.Since(start)),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	i.log.LogAttrs(ctx, level, "rpc", attrs...)
}

// recoverHandler turns a panic in a handler into an internal error and logs
// its stack, so one bad request never takes the server down.
func recoverHandler(log *slog.Logger) connect.HandlerOption {
	return connect.WithRecover(func(ctx context.Context, spec connect.Spec, _ http.Header, p any) error {
		log.ErrorContext(ctx, "panic in handler", "procedure", spec.Procedure, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		return connect.NewError(connect.CodeInternal, fmt.Errorf("internal error"))
	})
}

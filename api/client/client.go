// Package client is the one client of an agents server in this
// repository: the generated Connect clients, a dialer for every address a
// user can give (http(s)://, unix://PATH, a bare socket path, or an
// in-process handler), a check that the address answers as an agents
// server, and a subscription that reconnects by itself from the last
// position it delivered. The CLI and the terminal UI both use it, so a
// command never knows whether its server is local or remote.
package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
)

// Client talks to one server.
type Client struct {
	Agents    agentsv1connect.AgentServiceClient
	Sessions  agentsv1connect.SessionServiceClient
	Events    agentsv1connect.EventServiceClient
	Owners    agentsv1connect.OwnerServiceClient
	Schedules agentsv1connect.ScheduleServiceClient

	// Target names the server for messages: its URL or socket path.
	Target string

	// timing paces Subscribe's reconnections; zero fields take the
	// defaults (tests shorten them).
	timing timing

	// What the service clients were built with, for Intercepted.
	http    *http.Client
	baseURL string
	opts    []connect.ClientOption

	closeOnce sync.Once
	close     func()
}

// Close releases the connections and whatever the dialer attached, such
// as an in-process server. Calling it again does nothing.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		if c.close != nil {
			c.close()
		}
	})
}

// OnClose adds f to what Close does, after what it did already: the
// owner of an in-process server stops it there, once no request reaches
// it any more.
func (c *Client) OnClose(f func()) {
	prev := c.close
	c.close = func() {
		if prev != nil {
			prev()
		}
		f()
	}
}

// New returns a client that reaches baseURL through h, sending token (when
// not empty) as a bearer token on every call, streams included.
func New(h *http.Client, baseURL, token string) *Client {
	c := build(h, baseURL, []connect.ClientOption{connect.WithInterceptors(bearer(token))})
	c.Target, c.close = baseURL, h.CloseIdleConnections
	return c
}

func build(h *http.Client, baseURL string, opts []connect.ClientOption) *Client {
	return &Client{
		Agents:    agentsv1connect.NewAgentServiceClient(h, baseURL, opts...),
		Sessions:  agentsv1connect.NewSessionServiceClient(h, baseURL, opts...),
		Events:    agentsv1connect.NewEventServiceClient(h, baseURL, opts...),
		Owners:    agentsv1connect.NewOwnerServiceClient(h, baseURL, opts...),
		Schedules: agentsv1connect.NewScheduleServiceClient(h, baseURL, opts...),
		http:      h,
		baseURL:   baseURL,
		opts:      opts,
	}
}

// Intercepted returns a client of the same server, over the same
// connections, whose calls and streams (Subscribe's included) also pass
// through interceptors, inside c's own. Closing it closes c.
func (c *Client) Intercepted(interceptors ...connect.Interceptor) *Client {
	n := build(c.http, c.baseURL, append(slices.Clip(c.opts), connect.WithInterceptors(interceptors...)))
	n.Target, n.timing, n.close = c.Target, c.timing, c.Close
	return n
}

// Dial returns a client of the server at target: http(s)://host:port,
// unix:///path, or a socket path (absolute or starting with ./ or ../).
// It does not connect; Check does.
func Dial(target, token string) (*Client, error) {
	if path, ok := SocketPath(target); ok {
		if path == "" {
			return nil, fmt.Errorf("%q: the socket path is empty", target)
		}
		c := New(unixHTTPClient(path), "http://localhost", token)
		c.Target = path
		return c, nil
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q: want http(s)://host:port, unix:///path or a socket path", target)
	}
	return New(&http.Client{}, strings.TrimSuffix(target, "/"), token), nil
}

// SocketPath reports whether target names a Unix socket, and its path.
func SocketPath(target string) (string, bool) {
	if p, ok := strings.CutPrefix(target, "unix://"); ok {
		return p, true
	}
	if strings.HasPrefix(target, "/") || strings.HasPrefix(target, "./") || strings.HasPrefix(target, "../") {
		return target, true
	}
	return "", false
}

func unixHTTPClient(path string) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
	}}
}

type tokenKey struct{}

// WithToken returns ctx whose calls carry token as their bearer token in
// place of the client's own: a process that relays the requests of
// several callers to one server (the MCP endpoint) acts as each of them.
func WithToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// bearer sends the token with every call, streams included: the one
// WithToken put in the call's context, else its own, else none.
type bearer string

var _ connect.Interceptor = bearer("")

func (t bearer) token(ctx context.Context) string {
	if token, ok := ctx.Value(tokenKey{}).(string); ok {
		return token
	}
	return string(t)
}

func (t bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if token := t.token(ctx); token != "" {
			req.Header().Set("Authorization", "Bearer "+token)
		}
		return next(ctx, req)
	}
}

func (t bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		if token := t.token(ctx); token != "" {
			conn.RequestHeader().Set("Authorization", "Bearer "+token)
		}
		return conn
	}
}

func (t bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// String hides the token, should the interceptor ever be printed.
func (t bearer) String() string { return "bearer [redacted]" }

// Describe turns a call's error into a line for a person: the server's
// message, and the machine code when it has one.
func Describe(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	if ce.Code() == connect.CodeUnavailable {
		return fmt.Errorf("server unavailable: %s", ce.Message())
	}
	return fmt.Errorf("%s: %s", ce.Code(), ce.Message())
}

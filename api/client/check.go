package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// What Check found wrong, for errors.Is: the caller adds its own advice
// (which flag gives a token, which command starts a server).
var (
	// ErrUnreachable: nothing answers at the target.
	ErrUnreachable = errors.New("unreachable")
	// ErrNotAgents: something answers, but not as an agents server.
	ErrNotAgents = errors.New("not an agents server")
	// ErrUnauthenticated: the server wants a (valid) bearer token.
	ErrUnauthenticated = errors.New("unauthenticated")
)

// checkTimeout bounds Check: a server that takes longer to list its
// agents is as good as gone for someone waiting at a prompt.
const checkTimeout = 5 * time.Second

// Check makes one quick call (ListAgents) to tell whether the target is an
// agents server that accepts this client. Its error names the target and
// wraps ErrUnreachable, ErrNotAgents or ErrUnauthenticated when it is one
// of those.
func (c *Client) Check(ctx context.Context) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	_, err := c.Agents.ListAgents(ctx, connect.NewRequest(&agentsv1.ListAgentsRequest{}))
	if err == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w: no answer within %s", c.Target, ErrUnreachable, time.Since(start).Round(time.Millisecond))
	}
	return c.checkError(err)
}

// checkError classifies the error of Check's call.
func (c *Client) checkError(err error) error {
	target := c.Target
	var (
		dnsErr *net.DNSError
		opErr  *net.OpError
	)
	switch {
	case errors.Is(err, syscall.ENOENT):
		return fmt.Errorf("%s: %w: no such socket", target, ErrUnreachable)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%s: %w: nothing listens there (connection refused)", target, ErrUnreachable)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("%s: %w: unknown host %s", target, ErrUnreachable, dnsErr.Name)
	case errors.As(err, &opErr):
		return fmt.Errorf("%s: %w: %v", target, ErrUnreachable, opErr.Err)
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return fmt.Errorf("%s: %w", target, err)
	}
	switch {
	case ce.Code() == connect.CodeUnauthenticated:
		return fmt.Errorf("%s: %w: %s", target, ErrUnauthenticated, ce.Message())
	case !connect.IsWireError(err) && ce.Code() == connect.CodeUnavailable:
		// The call never got an answer: the connection failed.
		return fmt.Errorf("%s: %w: %s", target, ErrUnreachable, ce.Message())
	case !connect.IsWireError(err), ce.Code() == connect.CodeUnimplemented:
		// An HTTP answer that is not a Connect error (a web page, a bare
		// 404), or a Connect server without the agents services.
		return fmt.Errorf("%s: %w (%s)", target, ErrNotAgents, ce.Message())
	}
	return fmt.Errorf("%s: %w", target, Describe(err))
}

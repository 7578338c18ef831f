// Package link is the terminal UI's one tie to a concrete server: it
// serves the interfaces the components call from the protocol's client,
// whose answers, streams and errors it cleans of escape sequences before
// any component sees them.
package link

import (
	"context"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/tui/sanitize"
)

// Link is a server reached through the protocol's client. The calls are
// the generated Connect clients' own.
type Link struct {
	agentsv1connect.SessionServiceClient
	agentsv1connect.AgentServiceClient
	agentsv1connect.ScheduleServiceClient
	agentsv1connect.WebhookServiceClient

	c *client.Client
}

// New links to the server c reaches. Every call, and the subscription,
// passes through sanitize's interceptor: what the server brings is
// cleaned before anything draws it.
func New(c *client.Client) *Link {
	c = c.Intercepted(sanitize.Interceptor())
	return &Link{SessionServiceClient: c.Sessions, AgentServiceClient: c.Agents, ScheduleServiceClient: c.Schedules, WebhookServiceClient: c.Webhooks, c: c}
}

// Subscribe follows the events req selects, reconnecting by itself;
// changes of the connection come as updates too.
func (l *Link) Subscribe(ctx context.Context, req *agentsv1.SubscribeRequest) <-chan client.Update {
	return l.c.Subscribe(ctx, req)
}

// Target names the server for the status bar.
func (l *Link) Target() string { return l.c.Target }

package tool

import (
	"context"
	"encoding/json"

	"github.com/agents-os/agents/backend/internal/session"
)

// Client is a tool the agent file declares and a client answers: its
// calls are deferred, and the server never runs them.
type Client struct {
	spec Spec
}

// NewClient offers a client tool.
func NewClient(name, description string, parameters json.RawMessage) *Client {
	return &Client{spec: Spec{Name: name, Description: description, Parameters: parameters, Kind: session.ToolClient, Source: "client"}}
}

// Spec implements Tool.
func (c *Client) Spec() Spec { return c.spec }

// Mode implements Tool: a client answers.
func (c *Client) Mode() session.CallMode { return session.CallDeferred }

// Execute implements Tool; the runner never calls it for a deferred tool.
func (c *Client) Execute(context.Context, Call) Result {
	return Failed("the tool " + c.spec.Name + " is answered by a client, not run by the server")
}

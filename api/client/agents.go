package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// CreateAgent stores a new agent whose definition is an agent file's
// JSON, as it is.
func (c *Client) CreateAgent(ctx context.Context, definition string) (*agentsv1.AgentDescriptor, error) {
	res, err := c.Agents.CreateAgent(ctx, connect.NewRequest(&agentsv1.CreateAgentRequest{Definition: definition}))
	if err != nil {
		return nil, err
	}
	return res.Msg.GetAgent(), nil
}

// StoredDefinition returns what an editor of a stored agent starts from:
// its definition and the version it is at. A file agent is an error that
// says it is read-only.
func (c *Client) StoredDefinition(ctx context.Context, slug string) (definition string, version int64, err error) {
	res, err := c.Agents.GetAgent(ctx, connect.NewRequest(&agentsv1.GetAgentRequest{Slug: slug}))
	if err != nil {
		return "", 0, err
	}
	a := res.Msg.GetAgent()
	if a.GetSource() != agentsv1.AgentSource_AGENT_SOURCE_STORED {
		return "", 0, fmt.Errorf("agent %q comes from the agent file %s: file agents are read-only to the API", slug, a.GetFile())
	}
	return a.GetDefinition(), a.GetVersion(), nil
}

// UpdateAgent stores definition as the agent's next version, only if the
// agent is still at version (the one StoredDefinition gave); a change
// made meanwhile makes it fail with IsVersionMismatch. Version 0 updates
// whatever version is current.
func (c *Client) UpdateAgent(ctx context.Context, slug, definition string, version int64) (*agentsv1.AgentDescriptor, error) {
	req := &agentsv1.UpdateAgentRequest{Slug: slug, Definition: definition}
	if version > 0 {
		req.ExpectedVersion = &version
	}
	res, err := c.Agents.UpdateAgent(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, err
	}
	return res.Msg.GetAgent(), nil
}

// DeleteAgent deletes a stored agent and returns the version it was at.
func (c *Client) DeleteAgent(ctx context.Context, slug string) (int64, error) {
	res, err := c.Agents.DeleteAgent(ctx, connect.NewRequest(&agentsv1.DeleteAgentRequest{Slug: slug}))
	if err != nil {
		return 0, err
	}
	return res.Msg.GetVersion(), nil
}

// ErrorField returns the field of an agent definition an error is about
// (`contents.modelUrl`), "" when it names none: an editor shows the
// problem there.
func ErrorField(err error) string {
	return errorDetail(err).GetMetadata()["field"]
}

// IsVersionMismatch reports whether an update or delete failed because
// the agent changed since its version was read: read it again and redo
// the change on what it is now.
func IsVersionMismatch(err error) bool {
	return connect.CodeOf(err) == connect.CodeAborted && errorDetail(err).GetCode() == "version_mismatch"
}

// errorDetail is the server's detail of a call's error, nil without one.
func errorDetail(err error) *agentsv1.ErrorDetail {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return nil
	}
	for _, d := range ce.Details() {
		if m, derr := d.Value(); derr == nil {
			if detail, ok := m.(*agentsv1.ErrorDetail); ok {
				return detail
			}
		}
	}
	return nil
}

// DiffableDefinition is an agent's definition as two versions are best
// compared line by line: as it was given, unless it is JSON on one line
// (as an API client may send it), which is indented first so a change
// shows as the lines it touched rather than as the whole document.
func DiffableDefinition(definition string) string {
	trimmed := strings.TrimSpace(definition)
	if strings.Contains(trimmed, "\n") || !json.Valid([]byte(trimmed)) {
		return definition
	}
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(trimmed), "", "  "); err != nil {
		return definition
	}
	out.WriteByte('\n')
	return out.String()
}

package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// cancelTimeout bounds the CancelRun sent for a cancelled call: the MCP
// client is gone already, the run must not outlive it unseen.
const cancelTimeout = 10 * time.Second

// ask is the handler of the agent slug's tool.
func (s *Server) ask(slug string) mcp.ToolHandlerFor[askInput, askOutput] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in askInput) (*mcp.CallToolResult, askOutput, error) {
		if strings.TrimSpace(in.Prompt) == "" {
			return nil, askOutput{}, errors.New("prompt is required")
		}
		if !s.enter() {
			return nil, askOutput{}, errClosed
		}
		defer s.wg.Done()
		c := &call{s: s, runs: s.client, slug: slug, in: in, progress: newProgress(ctx, req)}
		if token := bearerToken(req); token != "" && s.forTokens != nil {
			c.runs, ctx = s.forTokens, client.WithToken(ctx, token)
		}
		return c.run(ctx)
	}
}

// bearerToken is the token an MCP request over HTTP came with (the agents
// server checked it before the request got here), or "".
func bearerToken(req *mcp.CallToolRequest) string {
	if req.Extra == nil || req.Extra.Header == nil {
		return ""
	}
	scheme, token, ok := strings.Cut(req.Extra.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// call is one ask_<slug> call: a prompt posted to a session, followed
// until its run stops.
type call struct {
	s *Server
	// runs is the client the call acts through: as its caller.
	runs     *client.Client
	slug     string
	in       askInput
	progress *progress

	session string
	// deferred names the calls the run waits for, when it stops waiting.
	deferred []string
}

// run posts the prompt and waits for the answer. The outcome that is not
// an answer (a failure, a wait for deferred calls, a cancel by someone
// else) is a tool error that names the session, so the user can go on
// with it elsewhere.
func (c *call) run(ctx context.Context) (*mcp.CallToolResult, askOutput, error) {
	if err := c.open(ctx); err != nil {
		return c.fail(err)
	}

	subCtx, unsubscribe := context.WithCancel(ctx)
	defer unsubscribe()
	updates := c.runs.Subscribe(subCtx, &agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION, SessionId: c.session})
	// The prompt is posted once the stream is open, so not one event of
	// its run is missed.
	if err := c.awaitStream(ctx, updates); err != nil {
		return c.fail(err)
	}
	if err := c.post(ctx); err != nil {
		return c.fail(err)
	}

	tick := c.progress.ticker()
	defer tick.Stop()
	for {
		select {
		case u, ok := <-updates:
			if !ok {
				return c.interrupted(ctx)
			}
			var (
				done bool
				res  *mcp.CallToolResult
				out  askOutput
			)
			switch {
			case u.Event != nil:
				done, res, out = c.event(u.Event)
			case u.Snapshot != nil:
				// Events were missed: the session itself says how it
				// stands.
				var err error
				if done, res, out, err = c.settled(ctx); err != nil {
					return c.fail(err)
				}
			}
			if done {
				return res, out, nil
			}
		case <-tick.C:
			c.progress.flush()
		case <-ctx.Done():
			return c.interrupted(ctx)
		case <-c.s.ctx.Done():
			return c.interrupted(ctx)
		}
	}
}

// open finds the session the call continues, or creates one.
func (c *call) open(ctx context.Context) error {
	sessions := c.runs.Sessions
	if id := c.in.SessionID; id != "" {
		got, err := sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
		if err != nil {
			return client.Describe(err)
		}
		if agent := got.Msg.GetSession().GetMeta().GetAgent(); agent != c.slug {
			return fmt.Errorf("session %s runs the agent %s: continue it with %s", id, agent, ToolName(agent))
		}
		c.session = id
		return nil
	}
	created, err := sessions.CreateSession(ctx, connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: c.slug, Params: c.params()}))
	if err != nil {
		return client.Describe(err)
	}
	c.session = created.Msg.GetSession().GetMeta().GetId()
	return nil
}

// params are the server's default params with the call's over them.
func (c *call) params() map[string]string {
	if len(c.s.params) == 0 {
		return c.in.Params
	}
	out := maps.Clone(c.s.params)
	maps.Copy(out, c.in.Params)
	return out
}

// awaitStream waits until the subscription is open.
func (c *call) awaitStream(ctx context.Context, updates <-chan client.Update) error {
	for {
		select {
		case u, ok := <-updates:
			if !ok {
				return ctx.Err()
			}
			if u.State == nil {
				continue
			}
			if !u.State.Connected {
				return fmt.Errorf("follow session %s: %w", c.session, client.Describe(u.State.Err))
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// post sends the prompt. A session that is paused or waits for deferred
// calls keeps it as mail and starts no run: there is nothing to wait for.
func (c *call) post(ctx context.Context) error {
	posted, err := c.runs.Sessions.PostMessage(ctx, connect.NewRequest(&agentsv1.PostMessageRequest{
		SessionId: c.session,
		Message:   &agentsv1.Message{Text: c.in.Prompt},
		Params:    c.params(),
	}))
	if err != nil {
		return client.Describe(err)
	}
	switch posted.Msg.GetMeta().GetStatus() {
	case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
		return errors.New("the session waits for deferred calls; the prompt is kept as mail for when they are answered (with CompleteCall, in the terminal UI or the web app)")
	case agentsv1.SessionStatus_SESSION_STATUS_PAUSED:
		return errors.New("the session is paused; the prompt is kept as mail for when it is resumed")
	}
	return nil
}

// event follows the run by one event; done reports that it is over, with
// the call's result.
func (c *call) event(ev *agentsv1.Event) (done bool, res *mcp.CallToolResult, out askOutput) {
	if ev.GetSessionId() != c.session {
		return false, nil, askOutput{}
	}
	switch body := ev.GetBody().(type) {
	case *agentsv1.Event_TextDelta:
		c.progress.text(body.TextDelta.GetTurnIndex(), body.TextDelta.GetText())
	case *agentsv1.Event_ToolStarted:
		c.progress.toolStarted(body.ToolStarted.GetCall())
	case *agentsv1.Event_ToolProgressed:
		c.progress.toolProgressed(body.ToolProgressed.GetCallId(), body.ToolProgressed.GetMessage())
	case *agentsv1.Event_ToolCompleted:
		c.progress.toolCompleted(body.ToolCompleted.GetResult())
	case *agentsv1.Event_SubcallStarted:
		c.progress.activity("asking the helper " + body.SubcallStarted.GetAgent())
	case *agentsv1.Event_CallsDeferred:
		for _, d := range body.CallsDeferred.GetCalls() {
			c.deferred = append(c.deferred, d.GetCall().GetName())
		}
	case *agentsv1.Event_SessionFailed:
		res, out := c.toolError(fmt.Errorf("the run failed: %s", body.SessionFailed.GetReason()))
		return true, res, out
	case *agentsv1.Event_SessionDeleted:
		res, out := c.toolError(errors.New("the session was deleted"))
		return true, res, out
	case *agentsv1.Event_RunStopped:
		res, out := c.stopped(body.RunStopped)
		return true, res, out
	}
	return false, nil, askOutput{}
}

// stopped turns the end of the run into the call's result.
func (c *call) stopped(rs *agentsv1.RunStopped) (*mcp.CallToolResult, askOutput) {
	c.progress.flush()
	reason := rs.GetReason()
	switch {
	case rs.GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_WAITING:
		what := "deferred calls"
		if len(c.deferred) > 0 {
			what = "deferred calls (" + strings.Join(c.deferred, ", ") + ")"
		}
		return c.toolError(fmt.Errorf("the run waits for %s that an MCP client cannot answer: answer them with CompleteCall, in the terminal UI or the web app", what))
	case rs.GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_PAUSED:
		return c.toolError(errors.New("the run was paused; resume it to get the answer"))
	case reason == "done":
		out := askOutput{Answer: rs.GetText(), SessionID: c.session}
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: out.Answer},
			&mcp.TextContent{Text: c.sessionLine()},
		}}, out
	default:
		return c.toolError(fmt.Errorf("the run stopped: %s", reason))
	}
}

// settled reads the session after events were missed: done reports that
// its run is over, with the result the events would have given.
func (c *call) settled(ctx context.Context) (done bool, res *mcp.CallToolResult, out askOutput, err error) {
	got, err := c.runs.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: c.session, LastTurns: 1}))
	if err != nil {
		return false, nil, askOutput{}, client.Describe(err)
	}
	m := got.Msg.GetSession().GetMeta()
	switch m.GetStatus() {
	case agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
		return false, nil, askOutput{}, nil
	case agentsv1.SessionStatus_SESSION_STATUS_FAILED:
		res, out := c.toolError(fmt.Errorf("the run failed: %s", m.GetStatusReason()))
		return true, res, out, nil
	}
	reason := m.GetStatusReason()
	if reason == "" {
		reason = "done"
	}
	var text string
	if turns := got.Msg.GetSession().GetTurns(); len(turns) > 0 {
		text = turns[len(turns)-1].GetLlm().GetText()
	}
	res, out = c.stopped(&agentsv1.RunStopped{Status: m.GetStatus(), Reason: reason, Text: text})
	return true, res, out, nil
}

// interrupted ends a call whose context ended. A call the MCP client
// cancelled cancels its run: nobody waits for its answer any more. A call
// cut short by the server closing (which also ends the calls' contexts)
// leaves the run to the agents server, which resumes it after a restart.
func (c *call) interrupted(ctx context.Context) (*mcp.CallToolResult, askOutput, error) {
	if c.s.ctx.Err() != nil {
		res, out := c.toolError(errors.New("the MCP server is shutting down; the run goes on"))
		return res, out, nil
	}
	cancelCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if _, err := c.runs.Sessions.CancelRun(cancelCtx, connect.NewRequest(&agentsv1.CancelRunRequest{SessionId: c.session})); err != nil {
		c.s.log.Warn("cancel the run of a cancelled MCP call", "session", c.session, "error", client.Describe(err).Error())
	}
	return nil, askOutput{}, ctx.Err()
}

// fail ends the call with the tool error for err.
func (c *call) fail(err error) (*mcp.CallToolResult, askOutput, error) {
	res, out := c.toolError(err)
	return res, out, nil
}

// toolError is the tool error for err, naming the session when there is one.
func (c *call) toolError(err error) (*mcp.CallToolResult, askOutput) {
	text := err.Error()
	if c.session != "" {
		text = fmt.Sprintf("session %s: %s\n%s", c.session, text, c.sessionLine())
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, askOutput{SessionID: c.session}
}

// sessionLine tells the model (or the person) how to go on.
func (c *call) sessionLine() string {
	return fmt.Sprintf("session_id: %s (give it as session_id to %s to continue this conversation)", c.session, ToolName(c.slug))
}

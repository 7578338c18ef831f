package conversation

import (
	"context"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Client is what a conversation asks of the server. The calls have the
// generated Connect clients' shape, so those serve as they are and a test
// serves them from memory.
type Client interface {
	Poster
	GetSession(context.Context, *connect.Request[agentsv1.GetSessionRequest]) (*connect.Response[agentsv1.GetSessionResponse], error)
	ListAgents(context.Context, *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error)
	CreateSession(context.Context, *connect.Request[agentsv1.CreateSessionRequest]) (*connect.Response[agentsv1.CreateSessionResponse], error)
	CancelRun(context.Context, *connect.Request[agentsv1.CancelRunRequest]) (*connect.Response[agentsv1.CancelRunResponse], error)
	CancelAttached(context.Context, *connect.Request[agentsv1.CancelAttachedRequest]) (*connect.Response[agentsv1.CancelAttachedResponse], error)
	Pause(context.Context, *connect.Request[agentsv1.PauseRequest]) (*connect.Response[agentsv1.PauseResponse], error)
	Resume(context.Context, *connect.Request[agentsv1.ResumeRequest]) (*connect.Response[agentsv1.ResumeResponse], error)
	ForkSession(context.Context, *connect.Request[agentsv1.ForkSessionRequest]) (*connect.Response[agentsv1.ForkSessionResponse], error)
	ExportSession(context.Context, *connect.Request[agentsv1.ExportSessionRequest]) (*connect.Response[agentsv1.ExportSessionResponse], error)
	CompleteCall(context.Context, *connect.Request[agentsv1.CompleteCallRequest]) (*connect.Response[agentsv1.CompleteCallResponse], error)
	Compact(context.Context, *connect.Request[agentsv1.CompactRequest]) (*connect.Response[agentsv1.CompactResponse], error)
}

// Poster posts a message to a session: all Drafts needs, which outlives
// the screens.
type Poster interface {
	PostMessage(context.Context, *connect.Request[agentsv1.PostMessageRequest]) (*connect.Response[agentsv1.PostMessageResponse], error)
}

package ui

import (
	"context"

	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/agentsview"
	"github.com/agents-os/agents/tui/internal/chats"
	"github.com/agents-os/agents/tui/internal/conversation"
	"github.com/agents-os/agents/tui/internal/history"
	"github.com/agents-os/agents/tui/internal/link"
	"github.com/agents-os/agents/tui/internal/schedulesview"
	"github.com/agents-os/agents/tui/internal/webhooksview"
)

// Client is everything the TUI asks of its server: what each component
// calls, and what the shell calls itself. link.Link serves it over the
// protocol; tests serve it from memory.
type Client interface {
	chats.Client
	history.Client
	agentsview.Client
	schedulesview.Client
	webhooksview.Client
	conversation.Client
	// SendMail stops, on quit, the runs an embedded TUI started.
	SendMail(context.Context, *connect.Request[agentsv1.SendMailRequest]) (*connect.Response[agentsv1.SendMailResponse], error)
	// Subscribe follows the events of req's scope, and the changes of the
	// connection, until ctx ends.
	Subscribe(ctx context.Context, req *agentsv1.SubscribeRequest) <-chan client.Update
	// Target names the server, for the status bar.
	Target() string
}

var _ Client = (*link.Link)(nil)

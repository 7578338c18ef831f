package ui

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/msgs"
)

// Subscribe follows the events of the owner's sessions through the
// shell's own client, so they come as every answer does.
func (m *Model) Subscribe(ctx context.Context) <-chan client.Update {
	return m.c.Subscribe(ctx, &agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER})
}

// Forward hands each update of a subscription to the program as the
// message the screens understand, until the subscription ends.
func Forward(updates <-chan client.Update, send func(tea.Msg)) {
	for u := range updates {
		switch {
		case u.Event != nil:
			send(msgs.Event{Event: u.Event})
		case u.Snapshot != nil:
			send(msgs.Snapshot{Snapshot: u.Snapshot})
		case u.State != nil:
			send(msgs.Conn{State: *u.State})
		}
	}
}

// sessionCreated is the answer of createSession.
type sessionCreated struct{ id string }

// createSession creates an idle session with agent; the shell opens it.
func createSession(ctx context.Context, c *client.Client, agent string) tea.Cmd {
	return func() tea.Msg {
		res, err := c.Sessions.CreateSession(ctx, connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: agent}))
		if err != nil {
			return msgs.Status{Err: fmt.Errorf("new session with %s: %w", agent, client.Describe(err))}
		}
		return sessionCreated{id: res.Msg.GetSession().GetMeta().GetId()}
	}
}

// stopTimeout bounds how long quitting waits for the server to take the
// stops: a server that does not answer must not keep the user in.
const stopTimeout = 5 * time.Second

// stopRuns sends each session a StopRun mail, all at once, and returns
// when every one was answered.
func stopRuns(ctx context.Context, c *client.Client, log *slog.Logger, ids []string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, stopTimeout)
		defer cancel()
		body := &agentsv1.MailBody{Kind: &agentsv1.MailBody_Control{Control: &agentsv1.ControlMessage{
			Kind: &agentsv1.ControlMessage_StopRun{StopRun: &agentsv1.StopRun{Reason: "the terminal UI that started it quit"}},
		}}}
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				_, err := c.Sessions.SendMail(ctx, connect.NewRequest(&agentsv1.SendMailRequest{SessionId: id, Body: body}))
				if err != nil {
					log.Warn("stop run on quit", "session", id, "err", err)
				}
			})
		}
		wg.Wait()
		return nil
	}
}

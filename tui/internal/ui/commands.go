package ui

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
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

// idLength is the length of a session id: shorter, it is a prefix.
const idLength = 36

// resolveID opens the session whose id is, or starts with, arg, as the
// CLI takes ids. What the list knows answers first; a whole id it does
// not know is asked of the server. When nothing matches, the screen
// stays as it was and the status line says why.
func (m *Model) resolveID(arg string) tea.Cmd {
	var matches []string
	for id := range m.chats.All() {
		if strings.HasPrefix(id, arg) {
			matches = append(matches, id)
		}
	}
	switch {
	case len(matches) == 1:
		return func() tea.Msg { return msgs.OpenSession{ID: matches[0]} }
	case len(matches) > 1:
		return func() tea.Msg {
			return msgs.Status{Err: fmt.Errorf("%q is the start of %d session ids: give more of it", arg, len(matches))}
		}
	case len(arg) < idLength:
		return func() tea.Msg { return msgs.Status{Err: fmt.Errorf("no session id starts with %q", arg)} }
	}
	ctx, c := m.ctx, m.c
	return func() tea.Msg {
		_, err := c.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: arg, MetaOnly: true}))
		if err != nil {
			return msgs.Status{Err: fmt.Errorf("open %s: %w", arg, client.Describe(err))}
		}
		return msgs.OpenSession{ID: arg}
	}
}

// stopTimeout bounds how long quitting waits for the server to take the
// stops: a server that does not answer must not keep the user in.
const stopTimeout = 5 * time.Second

// stopRuns sends each session a StopRun mail, all at once, and returns
// when every one was answered.
func stopRuns(ctx context.Context, c Client, log *slog.Logger, ids []string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, stopTimeout)
		defer cancel()
		body := &agentsv1.MailBody{Kind: &agentsv1.MailBody_Control{Control: &agentsv1.ControlMessage{
			Kind: &agentsv1.ControlMessage_StopRun{StopRun: &agentsv1.StopRun{Reason: "the terminal UI that started it quit"}},
		}}}
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				_, err := c.SendMail(ctx, connect.NewRequest(&agentsv1.SendMailRequest{SessionId: id, Body: body}))
				if err != nil {
					log.Warn("stop run on quit", "session", id, "err", err)
				}
			})
		}
		wg.Wait()
		return nil
	}
}

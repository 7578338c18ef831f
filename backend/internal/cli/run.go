package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Exit statuses of agents run beyond 0 (answered) and 1 (error).
const (
	exitRunFailed  = 3   // the run failed (model error, params, …)
	exitRunWaiting = 4   // the run waits for deferred calls a client must answer
	exitCancelled  = 130 // interrupted by the user (SIGINT)
)

func (a *app) runCommand() *cobra.Command {
	var cf clientFlags
	var offline string
	cmd := &cobra.Command{
		Use:   "run -a SLUG [--attach URL|PATH] PROMPT…",
		Short: "Run one prompt against an agent and stream the answer to stdout",
		Long: `Run one prompt against an agent and stream the answer to stdout.
Tool calls and helper agents are reported on stderr. The exit status is 0
when the agent answered, 3 when the run failed, 4 when it waits for a
client to answer deferred calls, 130 when interrupted.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.flags.Agent == "" {
				return errors.New("-a SLUG is required: the agent to run")
			}
			return a.runOnce(cmd.Context(), cf, offline, strings.Join(args, " "))
		},
	}
	cf.addClientFlags(cmd)
	cmd.Flags().StringVar(&offline, "offline-model", "", "model endpoint for agents whose API key is not configured (without --attach)")
	a.addModelFlags(cmd)
	return cmd
}

// runOnce creates a session with the prompt and follows its events until
// the run ends, printing the answer as it streams.
func (a *app) runOnce(ctx context.Context, cf clientFlags, offline, prompt string) error {
	params := map[string]string{}
	if cf.attach == "" || a.flags.ParamsFile != "" {
		res, err := a.resolve()
		if err != nil {
			return err
		}
		if params, err = res.LoadParams(); err != nil {
			return err
		}
	}
	c, err := a.dial(ctx, cf, embedOptions{offlineModel: offline})
	if err != nil {
		return err
	}
	defer c.Close()

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Subscribe before creating, so not one event of the run is missed:
	// the session is created once the stream is open.
	subCtx, unsubscribe := context.WithCancel(ctx)
	defer unsubscribe()
	updates := c.Subscribe(subCtx, &agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER})
	var p *runPrinter
	for u := range updates {
		switch {
		case u.State != nil && u.State.Connected && p == nil:
			created, err := c.Sessions.CreateSession(ctx, connect.NewRequest(&agentsv1.CreateSessionRequest{
				Agent:   a.flags.Agent,
				Message: &agentsv1.Message{Text: prompt},
				Params:  params,
			}))
			if err != nil {
				return client.Describe(err)
			}
			p = &runPrinter{out: a.stdout, log: a.stderr, session: created.Msg.GetSession().GetMeta().GetId(), turn: -1}
		case u.State != nil && !u.State.Connected:
			if p == nil {
				return client.Describe(fmt.Errorf("subscribe: %w", u.State.Err))
			}
			// The run goes on without us; the subscription catches up.
			fmt.Fprintf(a.stderr, "\nlost the server (%v); reconnecting\n", client.Describe(u.State.Err))
		case u.Snapshot != nil && p != nil:
			// Events were missed: the session itself says how it stands.
			if done, err := p.settled(ctx, c); done {
				return err
			}
		case u.Event != nil && p != nil:
			if done, err := p.event(u.Event); done {
				return err
			}
		}
	}
	if p == nil {
		return &exitError{code: exitCancelled, err: errors.New("interrupted")}
	}
	// Interrupted: stop the run rather than leave it going unseen.
	cancelCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = c.Sessions.CancelRun(cancelCtx, connect.NewRequest(&agentsv1.CancelRunRequest{SessionId: p.session}))
	fmt.Fprintf(a.stderr, "\ncancelled session %s\n", p.session)
	return &exitError{code: exitCancelled, err: errors.New("interrupted")}
}

// runPrinter turns one session's events into output: the answer text on
// out, tool and helper activity on log.
type runPrinter struct {
	out, log interface{ Write([]byte) (int, error) }
	session  string
	turn     int32
	// wrote says text was printed; newline says it ended a line.
	wrote, newline bool
}

// event prints one event; done reports that the run is over and with
// which outcome.
func (p *runPrinter) event(ev *agentsv1.Event) (done bool, err error) {
	if ev == nil || ev.GetSessionId() != p.session {
		return false, nil
	}
	switch body := ev.GetBody().(type) {
	case *agentsv1.Event_TextDelta:
		if body.TextDelta.GetTurnIndex() != p.turn {
			p.endLine() // a new step's text starts on its own line
		}
		p.turn = body.TextDelta.GetTurnIndex()
		text := body.TextDelta.GetText()
		fmt.Fprint(p.out, text)
		p.wrote, p.newline = true, strings.HasSuffix(text, "\n")
	case *agentsv1.Event_ToolStarted:
		c := body.ToolStarted.GetCall()
		fmt.Fprintf(p.log, "→ %s %s\n", c.GetName(), c.GetArguments())
	case *agentsv1.Event_ToolCompleted:
		r := body.ToolCompleted.GetResult()
		if r.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK {
			fmt.Fprintf(p.log, "← %s %s: %s\n", r.GetName(), statusWord(r.GetStatus()), firstLine(r.GetText()))
		}
	case *agentsv1.Event_SubcallStarted:
		fmt.Fprintf(p.log, "→ helper %s (session %s)\n", body.SubcallStarted.GetAgent(), body.SubcallStarted.GetChildSessionId())
	case *agentsv1.Event_SessionFailed:
		p.endLine()
		return true, &exitError{code: exitRunFailed, err: fmt.Errorf("session %s failed: %s", p.session, body.SessionFailed.GetReason())}
	case *agentsv1.Event_RunStopped:
		p.endLine()
		switch body.RunStopped.GetStatus() {
		case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
			return true, &exitError{code: exitRunWaiting, err: fmt.Errorf("session %s waits for deferred calls; answer them with CompleteCall", p.session)}
		case agentsv1.SessionStatus_SESSION_STATUS_READY:
			if r := body.RunStopped.GetReason(); r != "done" {
				return true, &exitError{code: exitRunFailed, err: fmt.Errorf("session %s stopped: %s", p.session, r)}
			}
			return true, nil
		default:
			return true, &exitError{code: exitRunFailed, err: fmt.Errorf("session %s stopped: %s", p.session, body.RunStopped.GetReason())}
		}
	}
	return false, nil
}

// settled reads the session after events were missed: done reports that
// its run is over, with the outcome event would have given.
func (p *runPrinter) settled(ctx context.Context, c *client.Client) (done bool, err error) {
	res, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: p.session}))
	if err != nil {
		return true, client.Describe(err)
	}
	m := res.Msg.GetSession().GetMeta()
	reason := m.GetStatusReason()
	switch m.GetStatus() {
	case agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
		return false, nil
	case agentsv1.SessionStatus_SESSION_STATUS_FAILED:
		return p.event(&agentsv1.Event{SessionId: p.session, Body: &agentsv1.Event_SessionFailed{SessionFailed: &agentsv1.SessionFailed{Reason: reason}}})
	case agentsv1.SessionStatus_SESSION_STATUS_READY:
		if reason == "" {
			reason = "done"
		}
	}
	return p.event(&agentsv1.Event{SessionId: p.session, Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{Status: m.GetStatus(), Reason: reason}}})
}

func (p *runPrinter) endLine() {
	if p.wrote && !p.newline {
		fmt.Fprintln(p.out)
	}
	p.wrote = false
}

func statusWord(s agentsv1.ToolResultStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "TOOL_RESULT_STATUS_"))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

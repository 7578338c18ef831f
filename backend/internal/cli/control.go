package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// The session controls of the TUI and the web app, on the command line:
// fork, mail, pause, cancel, interrupt and watch. Each takes a session id
// or a unique prefix, locally or on --attach.

func (a *app) sessionsFork(cf *clientFlags) *cobra.Command {
	var atTurn int
	var agent, title string
	cmd := &cobra.Command{
		Use:   "fork ID",
		Short: "Copy a session up to a turn into a new session, optionally with another agent; print the new id",
		Long: `Copy a session into a new one and print the new session's id. Every turn
is kept unless --at-turn N keeps only the turns up to N (counted from 0,
the first turn, as sessions show numbers them). --with SLUG binds the new
session to another agent: "continue with another agent". The new session
is titled after its source and where it was cut ("Plan (fork at turn 3)")
unless --title names it. A fork cut at a question holds it unanswered:
"agents sessions resume" runs it. ID may be a unique prefix.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.onSession(cmd.Context(), *cf, args[0], func(ctx context.Context, c *client.Client, id string) error {
				req := &agentsv1.ForkSessionRequest{SessionId: id, Agent: agent, Title: title}
				if cmd.Flags().Changed("at-turn") {
					meta, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
					if err != nil {
						return describe(err)
					}
					n := int(meta.Msg.GetSession().GetMeta().GetTurnCount())
					if atTurn < 0 || atTurn >= n {
						return fmt.Errorf("--at-turn %d: session %s has turns 0 to %d", atTurn, id, n-1)
					}
					// The protocol counts from the newest turn.
					back := int32(n - 1 - atTurn)
					req.AtTurn = &back
				}
				res, err := c.Sessions.ForkSession(ctx, connect.NewRequest(req))
				if err != nil {
					return describe(err)
				}
				fmt.Fprintln(a.stdout, res.Msg.GetSession().GetMeta().GetId())
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&atTurn, "at-turn", 0, "keep the turns up to this one (0 is the first); default: every turn")
	cmd.Flags().StringVar(&agent, "with", "", "agent of the new session (default: the same agent)")
	cmd.Flags().StringVar(&title, "title", "", `title of the new session (default: "<source title> (fork at turn N)")`)
	return cmd
}

func (a *app) sessionsMail(cf *clientFlags) *cobra.Command {
	var urgent bool
	var offline string
	cmd := &cobra.Command{
		Use:   "mail ID TEXT…|-",
		Short: "Send a session mail from you; an idle session runs to read it, and the command follows that run",
		Long: `Send a session mail from you, the text given or stdin for -, and print
its id on stderr. A running session reads it at its next step (--urgent
interrupts the step in flight to read it at once). An idle session starts
a run to read it: the command follows that run to its end as agents run
does, with its exit statuses. ID may be a unique prefix.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := a.textArg(args[1:], "the mail")
			if err != nil {
				return err
			}
			return a.followSession(cmd.Context(), *cf, offline, args[0], func(ctx context.Context, c *client.Client, id string, status agentsv1.SessionStatus) (string, error) {
				req := &agentsv1.SendMailRequest{SessionId: id, Body: &agentsv1.MailBody{
					Kind: &agentsv1.MailBody_UserMessage{UserMessage: &agentsv1.UserMessage{Text: text}},
				}, Priority: agentsv1.MailPriority_MAIL_PRIORITY_NORMAL}
				if urgent {
					req.Priority = agentsv1.MailPriority_MAIL_PRIORITY_URGENT
				}
				res, err := c.Sessions.SendMail(ctx, connect.NewRequest(req))
				if err != nil {
					return "", describe(err)
				}
				fmt.Fprintf(a.stderr, "mail %s sent to session %s\n", res.Msg.GetEnvelope().GetId(), id)
				if acceptsMailRun(status) {
					return id, nil // the mail starts a run: follow it
				}
				return "", nil
			})
		},
	}
	cmd.Flags().BoolVar(&urgent, "urgent", false, "interrupt the step in flight to read it at once")
	cmd.Flags().StringVar(&offline, "offline-model", "", offlineModelUsage)
	return cmd
}

// followSession resolves arg to a session and reads its status, then
// lets act do what starts the run the command follows (see follow).
func (a *app) followSession(ctx context.Context, cf clientFlags, offline, arg string, act func(ctx context.Context, c *client.Client, id string, status agentsv1.SessionStatus) (string, error)) error {
	return a.follow(ctx, cf, offline, func(ctx context.Context, c *client.Client) (string, error) {
		id, err := resolveSession(ctx, c, arg)
		if err != nil {
			return "", err
		}
		res, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
		if err != nil {
			return "", describe(err)
		}
		return act(ctx, c, id, res.Msg.GetSession().GetMeta().GetStatus())
	})
}

// acceptsMailRun says whether mail to a session in status st starts a
// run: an idle one wakes to read it; a running one folds it in its run,
// and a paused or waiting one keeps it until it goes on.
func acceptsMailRun(st agentsv1.SessionStatus) bool {
	return st == agentsv1.SessionStatus_SESSION_STATUS_READY || st == agentsv1.SessionStatus_SESSION_STATUS_FAILED
}

func (a *app) sessionsPause(cf *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "pause ID",
		Short: "Pause a session's run at its next step (sessions resume continues it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.onSession(cmd.Context(), *cf, args[0], func(ctx context.Context, c *client.Client, id string) error {
				res, err := c.Sessions.Pause(ctx, connect.NewRequest(&agentsv1.PauseRequest{SessionId: id}))
				if err != nil {
					return describe(err)
				}
				resume := fmt.Sprintf("agents sessions resume %s%s", id, a.serverArgs(*cf, ""))
				switch st := res.Msg.GetMeta().GetStatus(); st {
				case agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
					fmt.Fprintf(a.stderr, "session %s pauses at its next step; continue it with\n  %s\n", id, resume)
				case agentsv1.SessionStatus_SESSION_STATUS_PAUSED:
					fmt.Fprintf(a.stderr, "session %s is paused already; continue it with\n  %s\n", id, resume)
				default:
					// Only a run going on pauses: nothing changed.
					fmt.Fprintf(a.stderr, "session %s is %s: it has no run going to pause\n", id, statusName(st))
				}
				return nil
			})
		},
	}
}

func (a *app) sessionsCompact(cf *clientFlags) *cobra.Command {
	var instruction, offline string
	cmd := &cobra.Command{
		Use:   "compact ID",
		Short: "Fold a session's older turns into a summary now (nothing is deleted); print what it did",
		Long: `Compact a session: its older turns are folded into a summary that later
requests send in their place, and long old tool results are shortened.
Nothing is deleted: sessions show lists every turn, with the compaction as
a marker. --instruction says what the summary must keep. A running session
compacts before its next model call. ID may be a unique prefix.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := embedOptions{offlineModel: offline}
			return a.withClientOptions(cmd.Context(), *cf, opts, func(ctx context.Context, c *client.Client) error {
				id, err := resolveSession(ctx, c, args[0])
				if err != nil {
					return err
				}
				res, err := c.Sessions.Compact(ctx, connect.NewRequest(&agentsv1.CompactRequest{SessionId: id, Instruction: instruction}))
				if err != nil {
					return describe(err)
				}
				if res.Msg.GetPending() {
					fmt.Fprintf(a.stdout, "session %s is running: it compacts before its next model call\n", id)
					return nil
				}
				turn := res.Msg.GetCompaction()
				fmt.Fprintf(a.stdout, "[%d] %s\n", turn.GetIndex(), compactionLine(turn.GetCompaction()))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&instruction, "instruction", "", `what the summary must keep ("keep the API names")`)
	cmd.Flags().StringVar(&offline, "offline-model", "", offlineModelUsage)
	return cmd
}

func (a *app) sessionsCancel(cf *clientFlags) *cobra.Command {
	var hard bool
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Stop a session's run now (--hard: cancel only its running tools, the run goes on)",
		Long: `Stop a session's run now: the session becomes ready, the run's tools are
cancelled. With --hard only the attached tool calls in flight are
cancelled: they return a cancelled result and the run goes on. ID may be
a unique prefix.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.onSession(cmd.Context(), *cf, args[0], func(ctx context.Context, c *client.Client, id string) error {
				if hard {
					res, err := c.Sessions.CancelAttached(ctx, connect.NewRequest(&agentsv1.CancelAttachedRequest{SessionId: id}))
					if err != nil {
						return describe(err)
					}
					fmt.Fprintf(a.stderr, "session %s: %s cancelled\n", id, plural(int(res.Msg.GetCancelled()), "tool call"))
					return nil
				}
				before, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
				if err != nil {
					return describe(err)
				}
				res, err := c.Sessions.CancelRun(ctx, connect.NewRequest(&agentsv1.CancelRunRequest{SessionId: id}))
				if err != nil {
					return describe(err)
				}
				switch st := before.Msg.GetSession().GetMeta().GetStatus(); st {
				case agentsv1.SessionStatus_SESSION_STATUS_READY, agentsv1.SessionStatus_SESSION_STATUS_FAILED:
					// A failed run is over: cancel leaves it as it is.
					fmt.Fprintf(a.stderr, "session %s is %s: it had no run to cancel\n", id, statusName(st))
					return nil
				}
				fmt.Fprintf(a.stderr, "session %s: run cancelled, now %s\n", id, statusName(res.Msg.GetMeta().GetStatus()))
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&hard, "hard", false, "cancel the running tool calls only; the run goes on")
	return cmd
}

func (a *app) sessionsSend(cf *clientFlags) *cobra.Command {
	var offline string
	cmd := &cobra.Command{
		Use:   "send ID TEXT…|-",
		Short: "Go on with a session: post your next message and follow the run it starts",
		Long: `Post your next message to a session, the text given or stdin for -, as
the web app and the TUI do: on an idle session it starts a run, which the
command follows to its end as agents run does, with its exit statuses; a
running session folds it in at its next step, and the command follows
that run. A paused or waiting session keeps it until it goes on (agents
sessions resume). ID may be a unique prefix.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := a.textArg(args[1:], "the message")
			if err != nil {
				return err
			}
			return a.followSession(cmd.Context(), *cf, offline, args[0], func(ctx context.Context, c *client.Client, id string, status agentsv1.SessionStatus) (string, error) {
				res, err := c.Sessions.PostMessage(ctx, connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id,
					Message: &agentsv1.Message{Text: text}}))
				if err != nil {
					return "", describe(err)
				}
				if acceptsMailRun(status) || status == agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
					return id, nil
				}
				fmt.Fprintf(a.stderr, "session %s is %s: it keeps the message until it goes on (agents sessions resume %s)\n",
					id, statusName(res.Msg.GetMeta().GetStatus()), id)
				return "", nil
			})
		},
	}
	cmd.Flags().StringVar(&offline, "offline-model", "", offlineModelUsage)
	return cmd
}

func (a *app) sessionsInterrupt(cf *clientFlags) *cobra.Command {
	var offline string
	cmd := &cobra.Command{
		Use:   "interrupt ID TEXT…|-",
		Short: "Cut a session's step short and continue with a message; follow the run",
		Long: `Cut the step in flight short (the model call and the running tools) and
continue the run with the message, the text given or stdin for -; then
follow the run to its end as agents run does, with its exit statuses. On
an idle session the message starts a run. ID may be a unique prefix.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := a.textArg(args[1:], "the message")
			if err != nil {
				return err
			}
			return a.followSession(cmd.Context(), *cf, offline, args[0], func(ctx context.Context, c *client.Client, id string, status agentsv1.SessionStatus) (string, error) {
				// Only a run has a step to cut short; an idle session
				// takes the message as any other.
				busy := status == agentsv1.SessionStatus_SESSION_STATUS_RUNNING
				_, err := c.Sessions.PostMessage(ctx, connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id,
					Message: &agentsv1.Message{Text: text, Interrupt: busy}}))
				if err != nil {
					return "", describe(err)
				}
				return id, nil
			})
		},
	}
	cmd.Flags().StringVar(&offline, "offline-model", "", offlineModelUsage)
	return cmd
}

func (a *app) sessionsWatch(cf *clientFlags) *cobra.Command {
	var once bool
	cmd := &cobra.Command{
		Use:   "watch ID",
		Short: "Follow a session live: its answers on stdout, tools and stops on stderr, until interrupted",
		Long: `Follow a session as it runs: the model's text on stdout, tool and helper
calls and each stop of its runs on stderr. It watches run after run until
interrupted (Ctrl-C ends the watch, never the run). With --once it ends
when the run in flight, or the next one, stops, with the exit statuses of
agents run. ID may be a unique prefix.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				return a.watch(ctx, c, *cf, args[0], once)
			})
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "end when the current or next run stops, with agents run's exit status")
	return cmd
}

// watch follows one session's events until interrupted, or with once
// until its run stops; cf names c's server in the commands it advises.
// Unlike follow, leaving does not stop the run.
func (a *app) watch(ctx context.Context, c *client.Client, cf clientFlags, arg string, once bool) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	id, err := resolveSession(ctx, c, arg)
	if err != nil {
		return err
	}
	// The session as it stands, with the step in flight, and then the
	// events from the position it reflects: an answer joined midway is
	// printed whole, nothing twice.
	res, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
	if err != nil {
		return describe(err)
	}
	now := res.Msg.GetSession()
	newPrinter := func() *runPrinter {
		return &runPrinter{out: a.stdout, log: a.stderr, session: id, turn: -1, serverArgs: a.serverArgs(cf, ""), clientArgs: a.serverArgs(cf, "")}
	}
	p := newPrinter()
	subCtx, unsubscribe := context.WithCancel(ctx)
	defer unsubscribe()
	seq := now.GetSeq()
	updates := c.Subscribe(subCtx, &agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER, After: &seq, AfterDelta: now.GetDeltaSeq()})
	started := false
	for u := range updates {
		var done bool
		var err error
		switch {
		case u.State != nil && u.State.Connected && !started:
			started = true
			m := now.GetMeta()
			fmt.Fprintf(a.stderr, "watching session %s (%s, %s)\n", id, m.GetAgent(), statusName(m.GetStatus()))
			p.inProgress(now.GetInProgress())
			continue
		case u.State != nil && !u.State.Connected:
			if !started {
				return client.Describe(fmt.Errorf("subscribe: %w", u.State.Err))
			}
			fmt.Fprintf(a.stderr, "\nlost the server (%v); reconnecting\n", client.Describe(u.State.Err))
			continue
		case u.Snapshot != nil && started:
			// Events were missed: the session says how it stands.
			done, err = p.settled(ctx, c)
		case u.Event != nil && started:
			if done, err = p.event(u.Event); done {
				err = p.helpersCalls(ctx, c, err)
			}
		}
		if !done {
			continue
		}
		if once {
			return err
		}
		// Between runs: say how this one ended, and watch for the next.
		why := "the run ended"
		if err != nil {
			why = firstLine(err.Error())
		}
		fmt.Fprintf(a.stderr, "— %s\n", why)
		p = newPrinter()
	}
	return nil // interrupted: the watch ends, the run goes on
}

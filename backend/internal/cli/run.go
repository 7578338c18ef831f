package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	var bf budgetFlags
	var version int64
	cmd := &cobra.Command{
		Use:   "run [-a SLUG] [--agent-version N] [--attach URL|PATH] [--budget-tokens N] [--budget-usd X] PROMPT…|-",
		Short: "Run one prompt against an agent and stream the answer to stdout",
		Long: `Run one prompt against an agent and stream the answer to stdout.
Without -a, the only root agent of the agent files runs (or the only
stored agent, when the files have none). A prompt of - is read from
stdin. Tool calls and helper agents are reported on stderr. The exit
status is 0 when the agent answered, 3 when the run failed or its budget
stopped it, 4 when it waits for a client to answer deferred calls
(agents calls), 130 when interrupted. --budget-tokens and --budget-usd
give the session a budget its helpers spend too. --agent-version runs that
version of a stored agent rather than its current one.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prompt, err := a.textArg(args, "the prompt")
			if err != nil {
				return err
			}
			params, err := a.params()
			if err != nil {
				return err
			}
			budget, err := bf.budget()
			if err != nil {
				return err
			}
			return a.follow(cmd.Context(), cf, offline, func(ctx context.Context, c *client.Client) (string, error) {
				agent, err := a.agentToRun(ctx, c)
				if err != nil {
					return "", err
				}
				created, err := c.Sessions.CreateSession(ctx, connect.NewRequest(&agentsv1.CreateSessionRequest{
					Agent:   agent,
					Message: &agentsv1.Message{Text: prompt},
					Params:  params,
					Budget:  budget,

					AgentVersion: version,
				}))
				if err != nil {
					return "", describe(err)
				}
				return created.Msg.GetSession().GetMeta().GetId(), nil
			})
		},
	}
	a.addServerFlags(cmd, &cf)
	bf.add(cmd, "budget-", "the session and its helpers")
	cmd.Flags().StringVar(&offline, "offline-model", "", offlineModelUsage)
	cmd.Flags().Int64Var(&version, "agent-version", 0, "run this version of the stored agent (default: its current one)")
	return cmd
}

// textArg is the words of the command line, or stdin for "-"; what
// names the text in errors.
func (a *app) textArg(args []string, what string) (string, error) {
	if len(args) != 1 || args[0] != "-" {
		return strings.Join(args, " "), nil
	}
	b, err := io.ReadAll(a.stdin)
	if err != nil {
		return "", fmt.Errorf("read %s from stdin: %w", what, err)
	}
	text := strings.TrimRight(string(b), "\r\n")
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%s on stdin is empty", what)
	}
	return text, nil
}

// params are the session params of --params-file, if given.
func (a *app) params() (map[string]string, error) {
	if a.flags.ParamsFile == "" {
		return nil, nil
	}
	res, err := a.resolve()
	if err != nil {
		return nil, err
	}
	return res.LoadParams()
}

// agentToRun is -a, or the server's only root agent.
func (a *app) agentToRun(ctx context.Context, c *client.Client) (string, error) {
	if a.flags.Agent != "" {
		return a.flags.Agent, nil
	}
	return onlyRootAgent(ctx, c)
}

// onlyRootAgent is the agent a command without -a means: the only root
// agent of the agent files, or, when the files have none, the only
// stored one. Stored agents are added by any client at any time, so one
// stored beside agents init's example does not take its place; -a names
// it. No such agent, or more than one, is an error asking for -a.
func onlyRootAgent(ctx context.Context, c *client.Client) (string, error) {
	res, err := c.Agents.ListAgents(ctx, connect.NewRequest(&agentsv1.ListAgentsRequest{}))
	if err != nil {
		return "", describe(err)
	}
	var roots, fileRoots []string
	for _, ag := range res.Msg.GetAgents() {
		if ag.GetParent() != "" {
			continue
		}
		roots = append(roots, ag.GetSlug())
		if ag.GetSource() != agentsv1.AgentSource_AGENT_SOURCE_STORED {
			fileRoots = append(fileRoots, ag.GetSlug())
		}
	}
	switch {
	case len(fileRoots) == 1:
		return fileRoots[0], nil
	case len(fileRoots) == 0 && len(roots) == 1:
		return roots[0], nil
	case len(roots) == 0:
		return "", errors.New("the server has no agents to run (see agents check)")
	}
	return "", fmt.Errorf("-a SLUG is required: the server has %s: %s", plural(len(roots), "agent"), strings.Join(roots, ", "))
}

// follow starts a run with start and follows its events until it ends,
// printing the answer as it streams; the exit status says how it ended.
// start returns the session whose run to follow, or "" when there is
// none.
func (a *app) follow(ctx context.Context, cf clientFlags, offline string, start func(context.Context, *client.Client) (string, error)) error {
	return a.followHelped(ctx, cf, offline, func(ctx context.Context, c *client.Client) (string, []string, error) {
		id, err := start(ctx, c)
		return id, nil, err
	})
}

// followHelped is follow for a start that also names the helper sessions
// the run waits for already (an answer to a helper's call continues the
// run that waited for the helper): the calls they come to wait for are
// the run's to report.
func (a *app) followHelped(ctx context.Context, cf clientFlags, offline string, start func(context.Context, *client.Client) (string, []string, error)) error {
	return a.withClientOptions(ctx, cf, embedOptions{offlineModel: offline}, func(ctx context.Context, c *client.Client) error {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()

		// Subscribe before starting, so not one event of the run is missed:
		// the run starts once the stream is open.
		subCtx, unsubscribe := context.WithCancel(ctx)
		defer unsubscribe()
		updates := c.Subscribe(subCtx, &agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER})
		var p *runPrinter
		for u := range updates {
			switch {
			case u.State != nil && u.State.Connected && p == nil:
				id, helpers, err := start(ctx, c)
				if err != nil || id == "" {
					return err
				}
				p = &runPrinter{out: a.stdout, log: a.stderr, session: id, turn: -1, serverArgs: a.serverArgs(cf, offline), clientArgs: a.serverArgs(cf, "")}
				for _, h := range helpers {
					p.helper(h)
				}
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
					return p.helpersCalls(ctx, c, err)
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
	})
}

// serverArgs are the flags that name the server this command used, for
// the commands it advises: the same server, the same agents, the same
// database. A token given on the command line is not repeated.
func (a *app) serverArgs(cf clientFlags, offline string) string {
	var args []string
	add := func(flag, value string) {
		if value != "" {
			args = append(args, flag, shellQuote(value))
		}
	}
	if cf.attach != "" {
		add("--attach", cf.attach)
		add("--token-file", cf.tokenFile)
	} else {
		add("--config", a.flags.ConfigFile)
		for _, f := range a.flags.AgentFiles {
			add("--agent-file", f)
		}
		add("--api-keys", a.flags.APIKeysFile)
		add("--db", a.flags.DB)
		add("--offline-model", offline)
	}
	if len(args) == 0 {
		return ""
	}
	return " " + strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runPrinter turns one session's events into output: the answer text on
// out, tool and helper activity on log.
type runPrinter struct {
	out, log interface{ Write([]byte) (int, error) }
	session  string
	turn     int32
	// deferred are the calls the run waits for; serverArgs the flags
	// that reach the same server, for the commands that answer them.
	deferred   []*agentsv1.DeferredCall
	serverArgs string
	// clientArgs are serverArgs without the offline model, for the
	// commands that run no agent.
	clientArgs string
	// wrote says text was printed; newline says it ended a line.
	wrote, newline bool
	// helpers are the sessions the run's helper calls started, at any
	// depth: a call one of them waits for holds the run's helper call
	// open, so the run waits for it as for one of its own.
	helpers map[string]bool
	// waitingHelper is the helper's session whose calls stopped the
	// command, "" when they are the run's own.
	waitingHelper string
}

// inProgress prints the text of the step in flight as far as the model
// wrote it, for a printer that joins a run midway; the text deltas that
// follow go on from there.
func (p *runPrinter) inProgress(step *agentsv1.TurnInProgress) {
	if step.GetText() == "" {
		return
	}
	p.turn = step.GetTurnIndex()
	fmt.Fprint(p.out, step.GetText())
	p.wrote, p.newline = true, strings.HasSuffix(step.GetText(), "\n")
}

// event prints one event; done reports that the run is over and with
// which outcome.
func (p *runPrinter) event(ev *agentsv1.Event) (done bool, err error) {
	if ev != nil && p.helpers[ev.GetSessionId()] {
		return p.helperEvent(ev)
	}
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
	case *agentsv1.Event_CallsDeferred:
		p.deferred = append(p.deferred, body.CallsDeferred.GetCalls()...)
	case *agentsv1.Event_SubcallStarted:
		fmt.Fprintf(p.log, "→ helper %s (session %s)\n", body.SubcallStarted.GetAgent(), body.SubcallStarted.GetChildSessionId())
		p.helper(body.SubcallStarted.GetChildSessionId())
	case *agentsv1.Event_SessionFailed:
		p.endLine()
		return true, &exitError{code: exitRunFailed, err: fmt.Errorf("session %s failed: %s", p.session, body.SessionFailed.GetReason())}
	case *agentsv1.Event_RunStopped:
		p.endLine()
		if body.RunStopped.GetReason() == reasonBudget {
			return true, &exitError{code: exitRunFailed, err: p.overBudget(body.RunStopped.GetBudget())}
		}
		switch body.RunStopped.GetStatus() {
		case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
			return true, &exitError{code: exitRunWaiting, err: p.waiting()}
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

// reasonBudget is the status reason of a run its budget stopped.
const reasonBudget = "budget_exceeded"

// overBudget says which budget stopped the run and how to go on.
func (p *runPrinter) overBudget(which string) error {
	what, raise := "its budget cannot hold the next model call", fmt.Sprintf("agents sessions budget %s%s --tokens N", p.session, p.clientArgs)
	switch which {
	case "session":
		what = "the session tree's budget cannot hold the next model call (its input and some output)"
	case "owner":
		what, raise = "the owner's budget cannot hold the next model call (its input and some output)", fmt.Sprintf("agents owners budget OWNER%s --tokens N    # with an admin token", p.clientArgs)
	}
	return fmt.Errorf("session %s stopped: %s: %s; raise it with\n  %s\nthen continue with\n  agents sessions resume %s%s",
		p.session, reasonBudget, what, raise, p.session, p.serverArgs)
}

// helper notes a session a helper call of the run started.
func (p *runPrinter) helper(id string) {
	if p.helpers == nil {
		p.helpers = map[string]bool{}
	}
	p.helpers[id] = true
}

// helperEvent follows a helper's session: the helpers it starts in turn,
// and the calls it waits for. The run waits for its helper, and stops
// waiting (its own run.stopped ends the command) once the helper waits
// for them; once they are answered, the helper answers it.
func (p *runPrinter) helperEvent(ev *agentsv1.Event) (done bool, err error) {
	switch body := ev.GetBody().(type) {
	case *agentsv1.Event_SubcallStarted:
		p.helper(body.SubcallStarted.GetChildSessionId())
	case *agentsv1.Event_CallsDeferred:
		p.deferred = append(p.deferred, body.CallsDeferred.GetCalls()...)
		p.waitingHelper = ev.GetSessionId()
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
	if calls := res.Msg.GetSession().GetPendingCalls(); len(calls) > 0 || p.waitingHelper == "" {
		// A run that waits for its helper has no calls of its own: those
		// it waits for are its helper's, from the helper's events.
		p.deferred, p.waitingHelper = calls, ""
	}
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

// helpersCalls completes err, the end of a run that waits, when the
// run's events named no call it waits for: the calls are then those of
// the helper's session it waits for, which deferred them before this
// command came (a resume of a run whose helper still waits).
func (p *runPrinter) helpersCalls(ctx context.Context, c *client.Client, err error) error {
	var stopped *exitError
	if !errors.As(err, &stopped) || stopped.code != exitRunWaiting || len(p.deferred) > 0 {
		return err
	}
	chain, lookErr := waitingHelpers(ctx, c, p.session)
	if lookErr != nil || len(chain) == 0 {
		return err
	}
	helper := chain[len(chain)-1]
	calls, lookErr := pendingCalls(ctx, c, helper)
	if lookErr != nil || len(calls) == 0 {
		return err
	}
	p.deferred, p.waitingHelper = calls, helper
	return &exitError{code: exitRunWaiting, err: p.waiting()}
}

// waiting says which calls the run waits for and the commands that
// answer them.
func (p *runPrinter) waiting() error {
	if len(p.deferred) == 0 {
		return fmt.Errorf("session %s waits for deferred calls; list them with\n  agents calls ls --session %s%s", p.session, p.session, p.serverArgs)
	}
	var b strings.Builder
	if p.waitingHelper != "" {
		fmt.Fprintf(&b, "session %s waits for its helper's session %s, which waits for %s; answer with", p.session, p.waitingHelper, plural(len(p.deferred), "deferred call"))
	} else {
		fmt.Fprintf(&b, "session %s waits for %s; answer with", p.session, plural(len(p.deferred), "deferred call"))
	}
	// Approvals are approved or rejected, client tools' calls completed
	// or failed.
	var approvals, answers []string
	for _, d := range p.deferred {
		c := d.GetCall()
		if d.GetReason() == reasonApproval {
			approvals = append(approvals, d.GetToken())
			fmt.Fprintf(&b, "\n  agents calls approve %s%s    # %s %s", d.GetToken(), p.serverArgs, c.GetName(), oneLine(c.GetArguments(), 60))
		} else {
			answers = append(answers, d.GetToken())
			fmt.Fprintf(&b, "\n  agents calls complete %s --resume%s 'RESULT'    # %s %s", d.GetToken(), p.serverArgs, c.GetName(), oneLine(c.GetArguments(), 60))
		}
	}
	b.WriteString("\nor refuse with")
	if len(answers) > 0 {
		fmt.Fprintf(&b, "\n  agents calls fail %s --resume%s 'REASON'", tokenOrPlaceholder(answers), p.serverArgs)
	}
	if len(approvals) > 0 {
		fmt.Fprintf(&b, "\n  agents calls reject %s%s 'REASON'", tokenOrPlaceholder(approvals), p.serverArgs)
	}
	return errors.New(b.String())
}

// reasonApproval is the reason of a deferred call that waits for
// approval.
const reasonApproval = "approval"

// tokenOrPlaceholder is the one token of tokens, or TOKEN for several.
func tokenOrPlaceholder(tokens []string) string {
	if len(tokens) == 1 {
		return tokens[0]
	}
	return "TOKEN"
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

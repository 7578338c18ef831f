package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// callsCommand is `agents calls ls|complete|fail|approve|reject`: the
// deferred calls a run waits for (client tools, approvals), answered from
// the command line.
func (a *app) callsCommand() *cobra.Command {
	var cf clientFlags
	var offline string
	cmd := &cobra.Command{
		Use:   "calls",
		Short: "List and answer the deferred calls runs wait for (locally or on --attach)",
		Long: `List and answer deferred calls: the calls of client tools (complete, fail)
and those that wait for approval (approve, reject). A run stops in
waiting until every call of its round is answered, and so does a run
whose helper's session waits for one; with --resume (always, for an
approval) the answer that completes the round continues the run, and
the command follows it to its end like agents run: the run that waited
for the helper, when the call is a helper's.`,
		Args: cobra.NoArgs,
	}
	a.addServerFlags(cmd, &cf)
	cmd.PersistentFlags().StringVar(&offline, "offline-model", "", offlineModelUsage)
	cmd.AddCommand(a.callsList(&cf), a.callsAnswer(&cf, &offline, false), a.callsAnswer(&cf, &offline, true),
		a.callsApproval(&cf, &offline, true), a.callsApproval(&cf, &offline, false))
	return cmd
}

func (a *app) callsList(cf *clientFlags) *cobra.Command {
	var session string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the pending calls of a session, or of every session",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				if session != "" {
					id, err := resolveSession(ctx, c, session)
					if err != nil {
						return err
					}
					session = id
				}
				calls, err := pendingCalls(ctx, c, session)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(a.stdout, &agentsv1.CallsDeferred{Calls: calls})
				}
				if len(calls) == 0 {
					fmt.Fprintln(a.stderr, "no pending calls")
					return nil
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TOKEN\tSESSION\tTOOL\tREASON\tDEFERRED\tARGUMENTS")
				for _, d := range calls {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.GetToken(), d.GetSessionId(), d.GetCall().GetName(), d.GetReason(),
						d.GetCreateTime().AsTime().Local().Format(time.DateTime), oneLine(d.GetCall().GetArguments(), 60))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVarP(&session, "session", "s", "", "only this session's calls (an id or a unique prefix)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print the calls as JSON ({"calls": [...]})`)
	return cmd
}

// callsAnswer is `calls complete` or, with failing, `calls fail`.
func (a *app) callsAnswer(cf *clientFlags, offline *string, failing bool) *cobra.Command {
	var resume bool
	var value string
	cmd := &cobra.Command{
		Use:   "complete TOKEN (TEXT…|-|--json VALUE)",
		Short: "Answer a deferred call with its result",
		Long: `Answer a deferred call with its result: the words given, stdin for -, or
a JSON value (--json, checked and sent compact). TOKEN may be a unique
prefix of a pending call's token. With --resume the run continues once
every call of its round is answered, and the command follows it.`,
		Args: cobra.MinimumNArgs(1),
	}
	if failing {
		cmd.Use = "fail TOKEN REASON…|-"
		cmd.Short = "Refuse a deferred call: the model gets the reason as the call's error"
		cmd.Long = `Refuse a deferred call: the model gets REASON (or stdin, for -) as the
call's error result. TOKEN may be a unique prefix of a pending call's
token. With --resume the run continues once every call of its round is
answered, and the command follows it.`
		cmd.Args = cobra.MinimumNArgs(2)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		req, err := a.answer(args[1:], value, failing)
		if err != nil {
			return err
		}
		req.Resume = resume
		if req.Params, err = a.params(); err != nil {
			return err
		}
		return a.followHelped(cmd.Context(), *cf, *offline, a.completeCall(*cf, *offline, args[0], req))
	}
	if !failing {
		cmd.Flags().StringVar(&value, "json", "", "the result as a JSON value")
	}
	// The server's default: answering alone does not continue the run.
	cmd.Flags().BoolVar(&resume, "resume", false, "continue the run once every call of its round is answered, and follow it")
	return cmd
}

// callsApproval is `calls approve` or, without approving, `calls reject`.
func (a *app) callsApproval(cf *clientFlags, offline *string, approving bool) *cobra.Command {
	var always bool
	cmd := &cobra.Command{
		Use:   "approve TOKEN",
		Short: "Approve a call that waits for approval: the server runs it",
		Long: `Approve a call that waits for approval: the server runs it and its result
goes to the model. TOKEN may be a unique prefix of a pending call's token.
With --always, later calls of the same tool in that session run without
asking. Once every call of its round is answered the run continues, and
the command follows it to its end like agents run: the run that waits
for it, when the call is a helper's.`,
		Args: cobra.ExactArgs(1),
	}
	if !approving {
		cmd.Use = "reject TOKEN [REASON…|-]"
		cmd.Short = "Refuse a call that waits for approval: the model gets the reason"
		cmd.Long = `Refuse a call that waits for approval: it does not run, and the model
gets REASON (or stdin, for -; a default text without one) as the call's
error result. TOKEN may be a unique prefix of a pending call's token.
Once every call of its round is answered the run continues, and the
command follows it to its end like agents run: the run that waits for
it, when the call is a helper's.`
		cmd.Args = cobra.MinimumNArgs(1)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		approval := &agentsv1.Approval{Approve: approving, Always: always}
		if len(args) > 1 {
			reason, err := a.textArg(args[1:], "the reason")
			if err != nil {
				return err
			}
			approval.Reason = reason
		}
		req := &agentsv1.CompleteCallRequest{Result: &agentsv1.CompleteCallRequest_Approval{Approval: approval}, Resume: true}
		var err error
		if req.Params, err = a.params(); err != nil {
			return err
		}
		return a.followHelped(cmd.Context(), *cf, *offline, a.completeCall(*cf, *offline, args[0], req))
	}
	if approving {
		cmd.Flags().BoolVar(&always, "always", false, "also allow the tool's later calls in the session without asking")
	}
	return cmd
}

// completeCall is the start of a command that answers the call arg (a
// token or a unique prefix of one) with req: the session to follow is
// the run that goes on with the answer, which is the one that waited for
// the call's session, when it is a helper's child (see waitingRoot),
// with the helpers' sessions between them; "" when no run continues,
// with what the user can do next on stderr.
func (a *app) completeCall(cf clientFlags, offline, arg string, req *agentsv1.CompleteCallRequest) func(context.Context, *client.Client) (string, []string, error) {
	return func(ctx context.Context, c *client.Client) (string, []string, error) {
		token, owner, err := resolveCall(ctx, c, arg)
		if err != nil {
			return "", nil, err
		}
		req.Token = token
		// Found before the answer, which takes the waiting runs up.
		root := owner
		var helpers []string
		if owner != "" {
			if root, helpers, err = waitingRoot(ctx, c, owner); err != nil {
				return "", nil, err
			}
		}
		res, err := c.Sessions.CompleteCall(ctx, connect.NewRequest(req))
		if err != nil {
			return "", nil, describe(err)
		}
		id, left := res.Msg.GetMeta().GetId(), int(res.Msg.GetRemaining())
		switch {
		case left > 0:
			fmt.Fprintf(a.stderr, "answered; session %s still waits for %s\n", id, plural(left, "call"))
		case !req.GetResume():
			fmt.Fprintf(a.stderr, "answered every call; continue the run with\n  agents sessions resume %s%s\n", id, a.serverArgs(cf, offline))
		case root != "":
			return root, helpers, nil // the run continues: follow it
		default:
			return id, nil, nil
		}
		return "", nil, nil
	}
}

// waitingRoot is the session whose run waits for id's, through its
// helpers' children: id's parent when it waits for its helper session
// id, that one's parent when it waits for it in turn, and so on; id
// when no parent waits for it. helpers are the sessions below the root
// that it waits for, id included when it is not the root.
func waitingRoot(ctx context.Context, c *client.Client, id string) (root string, helpers []string, err error) {
	meta := func(id string) (*agentsv1.SessionMeta, error) {
		res, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
		if err != nil {
			return nil, describe(err)
		}
		return res.Msg.GetSession().GetMeta(), nil
	}
	m, err := meta(id)
	if err != nil {
		return "", nil, err
	}
	for m.GetParentId() != "" {
		parent, err := meta(m.GetParentId())
		if err != nil {
			return "", nil, err
		}
		// The status reason of a session that waits for its helper's
		// child names the child.
		if parent.GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_WAITING || !strings.Contains(parent.GetStatusReason(), m.GetId()) {
			break
		}
		helpers = append(helpers, m.GetId())
		m = parent
	}
	return m.GetId(), helpers, nil
}

// waitingHelpers are the helpers' sessions the run of id waits for, the
// nearest first: the child its status reason names while it waits for
// it, that child's in turn, and so on.
func waitingHelpers(ctx context.Context, c *client.Client, id string) ([]string, error) {
	var chain []string
	for {
		res, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
		if err != nil {
			return nil, describe(err)
		}
		m := res.Msg.GetSession().GetMeta()
		if m.GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_WAITING {
			return chain, nil
		}
		children, err := listAllSessions(ctx, c, &agentsv1.ListSessionsRequest{ParentId: id})
		if err != nil {
			return nil, err
		}
		next := ""
		for _, child := range children {
			if strings.Contains(m.GetStatusReason(), child.GetId()) {
				next = child.GetId()
				break
			}
		}
		if next == "" {
			return chain, nil
		}
		chain = append(chain, next)
		id = next
	}
}

// answer builds the request that answers a call from the words of the
// command line, stdin for "-", or a JSON value.
func (a *app) answer(words []string, value string, failing bool) (*agentsv1.CompleteCallRequest, error) {
	var text string
	switch {
	case value != "" && len(words) > 0:
		return nil, errors.New("give the result as words or as --json, not both")
	case value != "":
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(value)); err != nil {
			return nil, fmt.Errorf("--json %s: not a JSON value: %w", oneLine(value, 40), err)
		}
		text = compact.String()
	case len(words) == 0:
		return nil, errors.New("give the result: words, - for stdin, or --json VALUE")
	default:
		var err error
		if text, err = a.textArg(words, "the answer"); err != nil {
			return nil, err
		}
	}
	if failing {
		return &agentsv1.CompleteCallRequest{Result: &agentsv1.CompleteCallRequest_Error{Error: text}}, nil
	}
	return &agentsv1.CompleteCallRequest{Result: &agentsv1.CompleteCallRequest_Text{Text: text}}, nil
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
)

// sessionsCommand is `agents sessions ls|show|export|rm|resume|import`,
// the session controls (fork, mail, pause, compact, cancel, interrupt,
// watch) and
// the budget of a session's tree.
func (a *app) sessionsCommand() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, export, delete, fork, send to, mail, pause, compact, cancel, interrupt, watch and import sessions, and set their budgets (locally or on --attach)",
		Args:  cobra.NoArgs,
	}
	a.addServerFlags(cmd, &cf)
	cmd.AddCommand(a.sessionsList(&cf), a.sessionsShow(&cf), a.sessionsExport(&cf), a.sessionsRemove(&cf), a.sessionsResume(&cf),
		a.sessionsFork(&cf), a.sessionsSend(&cf), a.sessionsMail(&cf), a.sessionsPause(&cf), a.sessionsCompact(&cf), a.sessionsCancel(&cf), a.sessionsInterrupt(&cf), a.sessionsWatch(&cf),
		a.sessionsImport(&cf), a.sessionsBudget(&cf))
	return cmd
}

func (a *app) sessionsList(cf *clientFlags) *cobra.Command {
	var (
		all, roots, asJSON bool
		agent, status, q   string
		limit              int
	)
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List sessions, newest first",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > store.MaxPageSize {
				return fmt.Errorf("--limit %d: want 1 to %d", limit, store.MaxPageSize)
			}
			req := &agentsv1.ListSessionsRequest{Agent: agent, Query: q, RootsOnly: roots, AllOwners: all, PageSize: int32(limit)}
			if status != "" {
				v, ok := agentsv1.SessionStatus_value["SESSION_STATUS_"+strings.ToUpper(status)]
				if !ok || v == 0 {
					return fmt.Errorf("--status %q: want ready, running, waiting, paused or failed", status)
				}
				req.Status = agentsv1.SessionStatus(v)
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Sessions.ListSessions(ctx, connect.NewRequest(req))
				if err != nil {
					return describe(err)
				}
				if asJSON {
					return writeJSON(a.stdout, res.Msg)
				}
				list := res.Msg.GetSessions()
				if len(list) == 0 {
					fmt.Fprintln(a.stderr, "no sessions")
					return nil
				}
				if res.Msg.GetNextPageToken() != "" {
					fmt.Fprintf(a.stderr, "the newest %s; more with --limit\n", plural(len(list), "session"))
				}
				return writeSessionTable(a.stdout, list, all)
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&all, "all", false, "every owner's sessions (needs an admin token when attached with auth)")
	f.BoolVar(&roots, "roots", false, "leave out sub-agent sessions")
	// This --agent shadows the global one: here it filters the list, and
	// the server loads every agent, so sessions of any agent are listed
	// and an agent whose file is gone finds its old sessions.
	f.StringVarP(&agent, "agent", "a", "", "only sessions of this agent")
	f.StringVar(&status, "status", "", "only sessions in this status (ready, running, waiting, paused, failed)")
	f.StringVar(&q, "query", "", "only sessions whose title contains this")
	f.IntVar(&limit, "limit", 50, "most sessions to list (at most 500)")
	f.BoolVar(&asJSON, "json", false, "print the response as JSON")
	return cmd
}

func writeSessionTable(w io.Writer, sessions []*agentsv1.SessionMeta, withOwner bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "ID\tAGENT\tSTATUS\tTURNS\tUPDATED\tTITLE"
	if withOwner {
		header = "ID\tOWNER\tAGENT\tSTATUS\tTURNS\tUPDATED\tTITLE"
	}
	fmt.Fprintln(tw, header)
	for _, s := range sessions {
		cols := []string{s.GetId()}
		if withOwner {
			cols = append(cols, s.GetOwner())
		}
		cols = append(cols, s.GetAgent(), statusName(s.GetStatus()), fmt.Sprint(s.GetTurnCount()),
			s.GetUpdateTime().AsTime().Local().Format(time.DateTime), oneLine(s.GetTitle(), 60))
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	return tw.Flush()
}

func (a *app) sessionsShow(cf *clientFlags) *cobra.Command {
	var asJSON, thinking bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: its summary and its turns (ID may be a unique prefix)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.onSession(cmd.Context(), *cf, args[0], func(ctx context.Context, c *client.Client, id string) error {
				res, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id}))
				if err != nil {
					return describe(err)
				}
				if asJSON {
					return writeJSON(a.stdout, res.Msg.GetSession())
				}
				writeSession(a.stdout, res.Msg.GetSession(), thinking)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the session as JSON")
	cmd.Flags().BoolVar(&thinking, "thinking", false, "print the model's thinking in full (default: folded to its first line)")
	return cmd
}

// writeSession prints a session turn by turn. The model's thinking is
// folded to its first line and its size, unless thinking unfolds it.
func writeSession(w io.Writer, s *agentsv1.Session, thinking bool) {
	m := s.GetMeta()
	agent := m.GetAgent()
	switch v, pin := m.GetAgentVersion(), m.GetPinnedAgentVersion(); {
	case pin > 0:
		// Every step runs the version the session is pinned to.
		agent += fmt.Sprintf(" (pinned to version %d)", pin)
	case v > 0:
		// A stored agent: the version its latest step ran.
		agent += fmt.Sprintf(" (version %d)", v)
	}
	fmt.Fprintf(w, "session  %s\nagent    %s\nowner    %s\nstatus   %s", m.GetId(), agent, m.GetOwner(), statusName(m.GetStatus()))
	if r := m.GetStatusReason(); r != "" {
		fmt.Fprintf(w, " (%s)", r)
	}
	fmt.Fprintf(w, "\ntitle    %s\ncreated  %s\nupdated  %s\n", m.GetTitle(),
		m.GetCreateTime().AsTime().Local().Format(time.DateTime), m.GetUpdateTime().AsTime().Local().Format(time.DateTime))
	if p := m.GetParentId(); p != "" {
		fmt.Fprintf(w, "parent   %s\n", p)
	}
	if f := m.GetForkedFrom(); f != "" {
		fmt.Fprintf(w, "forked   from %s\n", f)
	}
	if u := m.GetUsage(); u != nil {
		fmt.Fprintf(w, "tokens   %d in, %d out", u.GetPromptTokens(), u.GetCompletionTokens())
		if u.CostUsd != nil {
			fmt.Fprintf(w, ", %s", usd(u.GetCostUsd()))
		}
		fmt.Fprintln(w)
	}
	writeTreeSpend(w, m)
	for _, t := range s.GetTurns() {
		fmt.Fprintln(w)
		switch k := t.GetKind().(type) {
		case *agentsv1.Turn_User:
			fmt.Fprintf(w, "[%d] user\n", t.GetIndex())
			writeIndented(w, k.User.GetText())
			for _, r := range k.User.GetToolResults() {
				fmt.Fprintf(w, "    ← %s: %s\n", r.GetName(), oneLine(r.GetText(), 100))
			}
		case *agentsv1.Turn_Llm:
			fmt.Fprintf(w, "[%d] %s\n", t.GetIndex(), m.GetAgent())
			writeThinking(w, k.Llm.GetThinking(), thinking)
			writeIndented(w, k.Llm.GetText())
			for _, c := range k.Llm.GetToolCalls() {
				fmt.Fprintf(w, "    → %s %s\n", c.GetName(), oneLine(c.GetArguments(), 100))
			}
		case *agentsv1.Turn_Compaction:
			fmt.Fprintf(w, "[%d] %s\n", t.GetIndex(), compactionLine(k.Compaction))
			writeIndented(w, k.Compaction.GetSummary())
		}
	}
	for _, d := range s.GetPendingCalls() {
		fmt.Fprintf(w, "\npending call %s (token %s)\n", d.GetCall().GetName(), d.GetToken())
	}
}

// writeThinking prints a turn's thinking: whole, or folded to one line
// that says how much more there is (sessions show --thinking unfolds it).
func writeThinking(w io.Writer, text string, whole bool) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if whole {
		fmt.Fprintln(w, "    thinking:")
		for line := range strings.SplitSeq(text, "\n") {
			fmt.Fprintf(w, "    │ %s\n", line)
		}
		return
	}
	n := strings.Count(text, "\n") + 1
	fmt.Fprintf(w, "    ▸ thinking (%s, --thinking shows it): %s\n", plural(n, "line"), oneLine(text, 80))
}

func writeIndented(w io.Writer, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
}

func (a *app) sessionsExport(cf *clientFlags) *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Export a session as Markdown or JSON (ID may be a unique prefix)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &agentsv1.ExportSessionRequest{}
			switch format {
			case "markdown", "md":
				req.Format = agentsv1.ExportFormat_EXPORT_FORMAT_MARKDOWN
			case "json":
				req.Format = agentsv1.ExportFormat_EXPORT_FORMAT_JSON
			default:
				return fmt.Errorf("--format %q: want markdown or json", format)
			}
			return a.onSession(cmd.Context(), *cf, args[0], func(ctx context.Context, c *client.Client, id string) error {
				req.SessionId = id
				res, err := c.Sessions.ExportSession(ctx, connect.NewRequest(req))
				if err != nil {
					return describe(err)
				}
				if out == "" || out == "-" {
					_, err = io.WriteString(a.stdout, res.Msg.GetContent())
					return err
				}
				return os.WriteFile(out, []byte(res.Msg.GetContent()), 0o600)
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "markdown", "markdown or json")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

func (a *app) sessionsRemove(cf *clientFlags) *cobra.Command {
	var cascade bool
	cmd := &cobra.Command{
		Use:     "rm ID...",
		Aliases: []string{"delete"},
		Short:   "Delete sessions (with --cascade, their sub-agent sessions too; IDs may be unique prefixes)",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mode := agentsv1.DeleteMode_DELETE_MODE_SINGLE
			if cascade {
				mode = agentsv1.DeleteMode_DELETE_MODE_CASCADE
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				// Every session is found before any is deleted: a
				// mistyped id deletes none.
				ids := make([]string, len(args))
				for i, arg := range args {
					id, err := resolveSession(ctx, c, arg)
					if err != nil {
						return err
					}
					ids[i] = id
				}
				for _, id := range ids {
					res, err := c.Sessions.DeleteSession(ctx, connect.NewRequest(&agentsv1.DeleteSessionRequest{SessionId: id, Mode: mode}))
					if code, meta := errorReason(err); code == errs.CodeSessionHasChildren {
						n, _ := strconv.Atoi(meta["children"])
						return fmt.Errorf("session %s has %s: add --cascade to delete them too", id, plural(n, "sub-agent session"))
					}
					if err != nil {
						return fmt.Errorf("%s: %w", id, describe(err))
					}
					for _, deleted := range res.Msg.GetDeletedIds() {
						fmt.Fprintln(a.stdout, "deleted", deleted)
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&cascade, "cascade", false, "also delete the sessions' sub-agent sessions")
	return cmd
}

func (a *app) sessionsResume(cf *clientFlags) *cobra.Command {
	var offline string
	cmd := &cobra.Command{
		Use:   "resume ID",
		Short: "Continue a paused run, a waiting one whose calls are answered, or a failed one, and follow it",
		Long: `Continue a session's run and stream its answer to stdout, as agents run
does, with the same exit statuses. --params-file resupplies params (the
secret ones a restart forgot). ID may be a unique prefix. A fork cut at a
question runs it. A ready session with nothing else to run has nothing to
resume: the command says so and exits with status 1 (a message goes on
with it: agents sessions send).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			params, err := a.params()
			if err != nil {
				return err
			}
			return a.follow(cmd.Context(), *cf, offline, func(ctx context.Context, c *client.Client) (string, error) {
				id, err := resolveSession(ctx, c, args[0])
				if err != nil {
					return "", err
				}
				res, err := c.Sessions.Resume(ctx, connect.NewRequest(&agentsv1.ResumeRequest{SessionId: id, Params: params}))
				if err != nil {
					return "", describe(err)
				}
				if res.Msg.GetMeta().GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_READY {
					// The server started no run: there is none to follow.
					return "", fmt.Errorf("session %s is ready: it has nothing to resume (no paused, stopped or failed run, no answered calls); go on with a message:\n  agents sessions send %s%s 'MESSAGE'", id, id, a.serverArgs(*cf, offline))
				}
				return id, nil
			})
		},
	}
	cmd.Flags().StringVar(&offline, "offline-model", "", offlineModelUsage)
	return cmd
}

func statusName(s agentsv1.SessionStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "SESSION_STATUS_"))
}

// oneLine shortens text to its first line and at most n characters.
func oneLine(text string, n int) string {
	line, _, more := strings.Cut(strings.TrimSpace(text), "\n")
	r := []rune(line)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	if more {
		return line + " …"
	}
	return line
}

// writeJSON prints a message in the protocol's JSON form, indented.
// protojson varies its whitespace on purpose (so nobody relies on it);
// encoding/json re-indents it the same way every time, for scripts that
// diff the output.
func writeJSON(w io.Writer, m proto.Message) error {
	// Empty fields are written too ("text": "", "toolCalls": []), as the
	// protocol's JSON routes write them: a script reads the same shape
	// whatever the session holds.
	b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = out.WriteTo(w)
	return err
}

// compactionLine says what a compaction did, as the clients' marker does.
func compactionLine(c *agentsv1.Compaction) string {
	var what []string
	if n := c.GetSummarizedTurns(); n > 0 {
		what = append(what, fmt.Sprintf("%d turns summarised", n))
	}
	if n := c.GetPrunedResults(); n > 0 {
		what = append(what, fmt.Sprintf("%d tool results shortened", n))
	}
	line := fmt.Sprintf("── compaction (%s): %s · %d → %d tokens", c.GetReason(), strings.Join(what, ", "), c.GetTokensBefore(), c.GetTokensAfter())
	if u := c.GetUsage(); u != nil && u.CostUsd != nil {
		line += " · " + usd(u.GetCostUsd())
	}
	return line + " ──"
}

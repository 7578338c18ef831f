package cli

import (
	"context"
	"errors"
	"fmt"
	udiff "github.com/aymanbagabas/go-udiff"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/tui/editor"
)

// sourceText names where an agent comes from, for the agents list: its
// file, or the database with its version.
func sourceText(ag *agentsv1.AgentDescriptor) string {
	if ag.GetSource() == agentsv1.AgentSource_AGENT_SOURCE_STORED {
		return fmt.Sprintf("stored v%d", ag.GetVersion())
	}
	return "file"
}

// agentError is describe for the calls that change stored agents, saying
// so when the server keeps none.
func agentError(err error) error {
	if connect.CodeOf(err) == connect.CodeUnimplemented {
		return fmt.Errorf("%w (this server does not store agents)", describe(err))
	}
	return describe(err)
}

func (a *app) agentsCreate(cf *clientFlags) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "create -f FILE",
		Short: "Store a new agent from an agent file's JSON (- reads stdin); needs an admin token when attached with auth",
		Long: `Store a new agent in the server's database from an agent file's JSON
(the format of agents/*.json; - reads it from stdin), served beside the
file agents from then on: agents run -a SLUG, the web app, the TUI and
MCP clients see it. The server checks it as agents check checks a file;
a stored agent runs programs (bash tools, MCP servers over stdio) only
from the folders serve --stored-agent-tool-dirs allows. A file such as
notes.json:

` + exampleStoredAgent + `
Without OPENAI_API_KEY (or the key its apiKeyId names), the agent talks
to the server's offline model, as the file agents do.`,
		Example: `  agents agents create -f notes.json
  agents agents create --attach http://127.0.0.1:7420 -f notes.json
  agents run -a notes "Remember the milk"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			def, err := a.readDefinition(file)
			if err != nil {
				return err
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Agents.CreateAgent(ctx, connect.NewRequest(&agentsv1.CreateAgentRequest{Definition: def}))
				if err != nil {
					return agentError(err)
				}
				ag := res.Msg.GetAgent()
				fmt.Fprintf(a.stdout, "created agent %s, version %d\n", ag.GetSlug(), ag.GetVersion())
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the agent file to store (- for stdin)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// exampleStoredAgent is the agent file agents create's help shows: the
// least a stored agent needs, with a client tool, since a stored agent
// runs no program unless the server allows its folder.
const exampleStoredAgent = `{
  "tag": "OpenAIAgentDescription",
  "contents": {
    "slug": "notes",
    "flavor": "OpenAIv1",
    "modelUrl": "https://api.openai.com/v1",
    "apiKeyId": "openai",
    "modelName": "gpt-4o-mini",
    "announce": "Takes notes, and asks when a note is unclear.",
    "systemPrompt": ["You keep the user's notes. When a note is unclear, ask with ask_user."],
    "clientTools": [
      {"name": "ask_user", "description": "Ask the user a question and return their answer.",
       "parameters": {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}}
    ]
  }
}
`

// readDefinition is the agent file at path, or stdin for "-".
func (a *app) readDefinition(path string) (string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(a.stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("-f: %w", err)
	}
	return string(b), nil
}

func (a *app) agentsEdit(cf *clientFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "edit SLUG",
		Short: "Edit a stored agent in $EDITOR and store it as a new version",
		Long: `Edit a stored agent's definition in $VISUAL or $EDITOR (else vi), as
kubectl edit does: when the editor ends, the file is stored as the
agent's next version. A file that is not JSON, or that the server
refuses, opens again with the error on top in comment lines (lines
starting with #, which are dropped). Saving the file unchanged, or
empty, cancels. An agent changed by someone else meanwhile is not
overwritten. File agents are read-only: change their file and reload.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				return a.editAgent(ctx, c, args[0])
			})
		},
	}
	return cmd
}

// editAgent runs the editor over the agent's definition until the server
// takes it, or the user cancels.
func (a *app) editAgent(ctx context.Context, c *client.Client, slug string) error {
	res, err := c.Agents.GetAgent(ctx, connect.NewRequest(&agentsv1.GetAgentRequest{Slug: slug}))
	if err != nil {
		return describe(err)
	}
	ag := res.Msg.GetAgent()
	if ag.GetSource() != agentsv1.AgentSource_AGENT_SOURCE_STORED {
		return fmt.Errorf("agent %s comes from the file %s and is read-only here: change the file, then reload", slug, ag.GetFile())
	}
	// An update that names no agent can store nothing: the server's
	// answer says whether this caller may change agents at all, before
	// the user spends an edit on it.
	_, err = c.Agents.UpdateAgent(ctx, connect.NewRequest(&agentsv1.UpdateAgentRequest{}))
	switch connect.CodeOf(err) {
	case connect.CodePermissionDenied, connect.CodeUnauthenticated, connect.CodeUnimplemented:
		return agentError(err)
	}
	version := ag.GetVersion()
	e := editor.New(ag.GetDefinition(), fmt.Sprintf("Agent %s, version %d. Saved, it becomes version %d.", slug, version, version+1))
	var last error
	for {
		saved, err := a.runEditor(e.Content(last))
		if err != nil {
			return err
		}
		doc, outcome := e.Take(saved)
		switch outcome {
		case editor.Emptied:
			fmt.Fprintln(a.stderr, "edit cancelled: the file was emptied")
			return nil
		case editor.Unchanged:
			fmt.Fprintln(a.stderr, "edit cancelled: no change")
			return nil
		}
		if last = editor.Valid(doc); last != nil {
			continue
		}
		up, err := c.Agents.UpdateAgent(ctx, connect.NewRequest(&agentsv1.UpdateAgentRequest{Slug: slug, Definition: doc, ExpectedVersion: &version}))
		if connect.CodeOf(err) == connect.CodeInvalidArgument {
			last = describe(err)
			continue
		}
		if err != nil {
			return a.keepEdit(slug, doc, err)
		}
		fmt.Fprintf(a.stdout, "agent %s: version %d\n", slug, up.Msg.GetAgent().GetVersion())
		return nil
	}
}

// keepEdit answers an edit the server did not store, for a reason
// another try of the editor cannot mend: the text is kept in a file, and
// the error says where and how to store it.
func (a *app) keepEdit(slug, doc string, err error) error {
	why := agentError(err)
	if code, _ := errorReason(err); code == errs.CodeVersionMismatch {
		why = fmt.Errorf("agent %s changed while you edited it (%w)", slug, describe(err))
	}
	tmp, _ := a.lookupEnv("TMPDIR") // empty: the system's
	f, ferr := os.CreateTemp(tmp, "agents-edit-"+slug+"-*.json")
	if ferr == nil {
		_, ferr = f.WriteString(doc)
		if cerr := f.Close(); ferr == nil {
			ferr = cerr
		}
	}
	if ferr != nil {
		return fmt.Errorf("%w; nothing stored, and the edited text could not be kept: %v", why, ferr)
	}
	return fmt.Errorf("%w; nothing stored. Your text is kept in %s: compare it with `agents agents show %s`, then store it with `agents agents update %s -f %s`", why, f.Name(), slug, slug, f.Name())
}

func (a *app) agentsUpdate(cf *clientFlags) *cobra.Command {
	var file string
	var expected int64
	cmd := &cobra.Command{
		Use:   "update SLUG -f FILE",
		Short: "Store an agent file's JSON (- reads stdin) as a stored agent's next version; needs an admin token when attached with auth",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			def, err := a.readDefinition(file)
			if err != nil {
				return err
			}
			req := &agentsv1.UpdateAgentRequest{Slug: args[0], Definition: def}
			if expected > 0 {
				req.ExpectedVersion = &expected
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Agents.UpdateAgent(ctx, connect.NewRequest(req))
				if err != nil {
					return agentError(err)
				}
				fmt.Fprintf(a.stdout, "agent %s: version %d\n", args[0], res.Msg.GetAgent().GetVersion())
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the agent file to store (- for stdin)")
	cmd.Flags().Int64Var(&expected, "expected-version", 0, "store only if the agent's current version is this one")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// runEditor edits content in the user's editor, on this command's
// terminal, and returns what was saved.
func (a *app) runEditor(content []byte) ([]byte, error) {
	path, err := editor.TempFile(content)
	if err != nil {
		return nil, fmt.Errorf("editor: %w", err)
	}
	defer os.Remove(path)
	getenv := func(k string) string { v, _ := a.lookupEnv(k); return v }
	cmd := editor.Cmd(getenv, path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("editor %s: %w", cmd.Path, err)
	}
	saved, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("editor: %w", err)
	}
	return saved, nil
}

func (a *app) agentsRemove(cf *clientFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "rm SLUG...",
		Aliases: []string{"delete"},
		Short:   "Delete stored agents (their sessions stay readable); needs an admin token when attached with auth",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				// Each slug is tried: one refused does not keep the others.
				var failed []error
				for _, slug := range args {
					res, err := c.Agents.DeleteAgent(ctx, connect.NewRequest(&agentsv1.DeleteAgentRequest{Slug: slug}))
					if err != nil {
						failed = append(failed, fmt.Errorf("%s: %w", slug, agentError(err)))
						continue
					}
					fmt.Fprintf(a.stdout, "deleted agent %s (version %d)\n", res.Msg.GetSlug(), res.Msg.GetVersion())
				}
				return errors.Join(failed...)
			})
		},
	}
	return cmd
}

func (a *app) agentsRollback(cf *clientFlags) *cobra.Command {
	var expected int64
	cmd := &cobra.Command{
		Use:   "rollback SLUG VERSION",
		Short: "Make an earlier version of a stored agent current again, written as a new version (needs an admin token when attached with auth)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			version, err := strconv.ParseInt(args[1], 10, 64)
			if err != nil || version <= 0 {
				return fmt.Errorf("%q is not a version: versions are 1, 2, … (agents agents versions %s lists them)", args[1], args[0])
			}
			req := &agentsv1.RollbackAgentRequest{Slug: args[0], Version: version}
			if expected > 0 {
				req.ExpectedVersion = &expected
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Agents.RollbackAgent(ctx, connect.NewRequest(req))
				if err != nil {
					return agentError(err)
				}
				fmt.Fprintf(a.stdout, "agent %s: version %d, restored from version %d\n", args[0], res.Msg.GetAgent().GetVersion(), version)
				return nil
			})
		},
	}
	cmd.Flags().Int64Var(&expected, "expected-version", 0, "roll back only if the current version is this one")
	return cmd
}

// agentsDiff prints what changed between two versions of a stored agent
// as a unified diff: by default from the version before the current one
// to the current one, as `agents agents versions` lists them.
func (a *app) agentsDiff(cf *clientFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diff SLUG [FROM [TO]]",
		Short: "Show what changed between two versions of a stored agent, as a unified diff (default: the current version against the one before it)",
		Example: `  agents agents diff reviewer          # the last change
  agents agents diff reviewer 2        # version 2 against the current one
  agents agents diff reviewer 2 5      # version 2 against version 5`,
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			var want []int64
			for _, arg := range args[1:] {
				v, err := strconv.ParseInt(arg, 10, 64)
				if err != nil || v <= 0 {
					return fmt.Errorf("%q is not a version: versions are 1, 2, … (agents agents versions %s lists them)", arg, args[0])
				}
				want = append(want, v)
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Agents.ListAgentVersions(ctx, connect.NewRequest(&agentsv1.ListAgentVersionsRequest{Slug: args[0]}))
				if err != nil {
					return agentError(err)
				}
				from, to, err := diffVersions(args[0], res.Msg.GetVersions(), want)
				if err != nil {
					return err
				}
				_, err = io.WriteString(a.stdout, udiff.Unified(
					fmt.Sprintf("%s version %d", args[0], from.GetVersion()),
					fmt.Sprintf("%s version %d", args[0], to.GetVersion()),
					client.DiffableDefinition(from.GetDefinition()), client.DiffableDefinition(to.GetDefinition())))
				return err
			})
		},
	}
	return cmd
}

// diffVersions picks the two versions a diff compares: want holds the
// versions named on the command line (none, FROM, or FROM and TO); the
// list is newest first.
func diffVersions(slug string, list []*agentsv1.AgentVersion, want []int64) (from, to *agentsv1.AgentVersion, err error) {
	if len(list) == 0 {
		return nil, nil, errors.New("no stored versions: " + slug + " is a file agent")
	}
	find := func(v int64) (*agentsv1.AgentVersion, error) {
		for _, av := range list {
			if av.GetVersion() == v {
				return av, nil
			}
		}
		return nil, fmt.Errorf("agent %s has no version %d (agents agents versions %s lists them)", slug, v, slug)
	}
	current := list[0]
	for _, av := range list {
		if av.GetCurrent() {
			current = av
			break
		}
	}
	switch len(want) {
	case 0:
		to = current
		for _, av := range list {
			if av.GetVersion() < current.GetVersion() && (from == nil || av.GetVersion() > from.GetVersion()) {
				from = av
			}
		}
		if from == nil {
			return nil, nil, fmt.Errorf("agent %s has one version only: nothing to compare it with", slug)
		}
		return from, to, nil
	case 1:
		from, err = find(want[0])
		return from, current, err
	default:
		if from, err = find(want[0]); err != nil {
			return nil, nil, err
		}
		to, err = find(want[1])
		return from, to, err
	}
}

func (a *app) agentsVersions(cf *clientFlags) *cobra.Command {
	var asJSON bool
	var show int64
	cmd := &cobra.Command{
		Use:   "versions SLUG",
		Short: "List a stored agent's versions, newest first (--show N prints one's definition)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Agents.ListAgentVersions(ctx, connect.NewRequest(&agentsv1.ListAgentVersionsRequest{Slug: args[0]}))
				if err != nil {
					return agentError(err)
				}
				list := res.Msg.GetVersions()
				if asJSON {
					return writeJSON(a.stdout, res.Msg)
				}
				if show != 0 {
					for _, v := range list {
						if v.GetVersion() == show {
							_, err := io.WriteString(a.stdout, v.GetDefinition())
							return err
						}
					}
					return fmt.Errorf("agent %s has no version %d", args[0], show)
				}
				if len(list) == 0 {
					return errors.New("no stored versions: " + args[0] + " is a file agent")
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "VERSION\tCURRENT\tWRITTEN\tAUTHOR\tRESTORED")
				for _, v := range list {
					current, restored := "", ""
					if v.GetCurrent() {
						current = "yes"
					}
					if from := v.GetRestoredFrom(); from > 0 {
						restored = fmt.Sprintf("from %d", from)
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", v.GetVersion(), current, v.GetCreateTime().AsTime().Local().Format(time.DateTime), v.GetAuthor(), restored)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the versions as JSON")
	cmd.Flags().Int64Var(&show, "show", 0, "print this version's definition")
	return cmd
}

package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// agentsCommand is `agents agents ls|show` and the commands that change
// stored agents (create, edit, update, rm, versions).
func (a *app) agentsCommand() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List and show the agents a server offers; create, edit and delete stored agents (locally or on --attach)",
		Args:  cobra.NoArgs,
	}
	a.addServerFlags(cmd, &cf)
	cmd.AddCommand(a.agentsList(&cf), a.agentsShow(&cf), a.agentsCreate(&cf), a.agentsEdit(&cf), a.agentsUpdate(&cf), a.agentsRemove(&cf), a.agentsVersions(&cf), a.agentsDiff(&cf), a.agentsRollback(&cf))
	return cmd
}

func (a *app) agentsList(cf *clientFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the agents, and the agent files that did not load",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Agents.ListAgents(ctx, connect.NewRequest(&agentsv1.ListAgentsRequest{}))
				if err != nil {
					return client.Describe(err)
				}
				if asJSON {
					return writeJSON(a.stdout, res.Msg)
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				// The endpoint is the one the agent really talks to: the
				// offline model's when the server lacks the agent's key.
				fmt.Fprintln(tw, "SLUG\tSOURCE\tMODEL\tENDPOINT\tTOOLS\tANNOUNCE")
				for _, ag := range res.Msg.GetAgents() {
					m := ag.GetModel()
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", ag.GetSlug(), sourceText(ag), m.GetName(), m.GetUrl(), len(ag.GetTools()), oneLine(ag.GetAnnounce(), 50))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				writeLoadErrors(a.stderr, res.Msg.GetErrors())
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the response as JSON")
	return cmd
}

func (a *app) agentsShow(cf *clientFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show SLUG",
		Short: "Show an agent: model, prompt, tools, helpers and params",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				res, err := c.Agents.GetAgent(ctx, connect.NewRequest(&agentsv1.GetAgentRequest{Slug: args[0]}))
				if err != nil {
					return client.Describe(err)
				}
				if asJSON {
					return writeJSON(a.stdout, res.Msg.GetAgent())
				}
				writeAgent(a.stdout, res.Msg.GetAgent())
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the agent as JSON")
	return cmd
}

func writeAgent(w io.Writer, ag *agentsv1.AgentDescriptor) {
	m := ag.GetModel()
	var key string
	switch {
	case m.GetApiKeyId() == "":
		key = "no key needed"
	case m.GetApiKeyPresent():
		key = fmt.Sprintf("key %q present", m.GetApiKeyId())
	default:
		key = fmt.Sprintf("key %q missing", m.GetApiKeyId())
	}
	fmt.Fprintf(w, "agent     %s\n", ag.GetSlug())
	if ag.GetSource() == agentsv1.AgentSource_AGENT_SOURCE_STORED {
		fmt.Fprintf(w, "stored    version %d, updated %s\n", ag.GetVersion(), ag.GetUpdateTime().AsTime().Local().Format(time.DateTime))
	} else {
		fmt.Fprintf(w, "file      %s\n", ag.GetFile())
	}
	fmt.Fprintf(w, "announce  %s\nmodel     %s at %s (%s; %s)\n", ag.GetAnnounce(), m.GetName(), m.GetUrl(), m.GetFlavor(), key)
	if window := windowText(m); window != "" {
		fmt.Fprintf(w, "context   %s\n", window)
	}
	if b := ag.GetBudget(); b != nil {
		fmt.Fprintf(w, "budget    %s for a session tree started with none\n", agentBudgetText(b))
	}
	if len(ag.GetHelpers()) > 0 {
		fmt.Fprintf(w, "helpers   %s\n", strings.Join(ag.GetHelpers(), ", "))
	}
	for _, p := range ag.GetParams() {
		var flags []string
		if p.GetRequired() {
			flags = append(flags, "required")
		}
		if p.GetSecret() {
			flags = append(flags, "secret")
		}
		fmt.Fprintf(w, "param     %s %v %s\n", p.GetName(), flags, p.GetDescription())
	}
	fmt.Fprintln(w, "\nsystem prompt:")
	for _, line := range ag.GetSystemPrompt() {
		fmt.Fprintf(w, "    %s\n", line)
	}
	fmt.Fprintln(w, "\ntools:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range ag.GetTools() {
		kind := strings.ToLower(strings.TrimPrefix(t.GetKind().String(), "TOOL_KIND_"))
		fmt.Fprintf(tw, "    %s\t%s\t%s\n", t.GetName(), kind, oneLine(t.GetDescription(), 70))
	}
	_ = tw.Flush()
}

func writeLoadErrors(w io.Writer, list []*agentsv1.AgentLoadError) {
	for _, e := range list {
		parts := []string{}
		for _, p := range []string{e.GetFile(), e.GetField(), e.GetReason()} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		fmt.Fprintln(w, "not loaded:", strings.Join(parts, ": "))
	}
}

// agentBudgetText words an agent's budget: "50,000 tokens, $1.50, resumes
// by itself".
func agentBudgetText(b *agentsv1.AgentBudget) string {
	var parts []string
	if b.Tokens != nil {
		parts = append(parts, thousands(b.GetTokens())+" tokens")
	}
	if b.CostUsd != nil {
		parts = append(parts, fmt.Sprintf("$%.2f", b.GetCostUsd()))
	}
	if b.GetAutoResume() {
		parts = append(parts, "resumes by itself")
	}
	return strings.Join(parts, ", ")
}

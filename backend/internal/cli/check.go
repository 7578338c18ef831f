package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/tools/fakellm"
)

func (a *app) checkCommand() *cobra.Command {
	var offline string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Load every agent and describe every tool; report each problem as file: field: reason",
		Long: `Load every agent file the configuration names, run "describe" on every
bash tool, start every MCP server and list its tools, and report each problem on a line of its own as
"file: field: reason". Exits 1 when any agent file or tool does not load.
Warnings (unknown or unsupported fields in the config and agent files, API
keys not found) do not change the exit status. With --offline-model, an
agent whose key is not found talks to the offline model: check says so
instead of warning, and checks the rules file when it names one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := a.resolve()
			if err != nil {
				return err
			}
			keys, err := res.LoadKeys(a.lookupEnv)
			if err != nil {
				return err
			}
			pool := mcptools.NewPool(mcptools.Options{})
			defer pool.Close()
			cat, err := a.loadCatalog(cmd.Context(), res, keys, catalog.Options{MCP: pool})
			if err != nil {
				return err
			}
			snap := cat.Snapshot()
			problems := snap.Errors
			warnings := append(append([]*agentfile.Error(nil), res.Warnings...), snap.Warnings...)
			for _, ag := range snap.Agents() {
				p, w := checkMCPServers(cmd.Context(), ag)
				problems, warnings = append(problems, p...), append(warnings, w...)
			}
			if isRulesFile(offline) {
				if _, err := fakellm.LoadRules(offline); err != nil {
					problems = append(problems, &agentfile.Error{File: offline, Reason: "the offline model's rules: " + err.Error()})
				}
			}
			for _, p := range problems {
				fmt.Fprintln(a.stdout, p.Error())
			}
			for _, ag := range snap.Agents() {
				switch {
				case ag.Model.KeyPresent || ag.Model.APIKeyID == "":
				case offline != "":
					fmt.Fprintf(a.stdout, "%s: no key %q: talks to the offline model (%s)\n", ag.Slug, ag.Model.APIKeyID, offline)
				default:
					warnings = append(warnings, missingKey(ag.File, ag.Model.APIKeyID))
				}
			}
			warnings = append(warnings, unpricedModels(res, snap.Agents())...)
			for _, w := range warnings {
				fmt.Fprintln(a.stdout, "warning:", w.Error())
			}
			fmt.Fprintf(a.stdout, "%s loaded, %s, %s\n", plural(len(snap.Agents()), "agent"), plural(len(problems), "problem"), plural(len(warnings), "warning"))
			if len(problems) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%s loading the agent files and their tools", plural(len(problems), "problem"))}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&offline, "offline-model", "", "the offline model (a URL, or a rules file) that agents without a key will talk to")
	return cmd
}

// checkMCPServers starts the agent's MCP servers and lists their tools:
// one that does not start is a problem; one whose headers need session
// params cannot be checked without them, a warning.
func checkMCPServers(ctx context.Context, ag *catalog.Agent) (problems, warnings []*agentfile.Error) {
	ag.Toolset(ctx, nil)
	for i, st := range ag.MCPStatus(nil) {
		if st.Error == "" {
			continue
		}
		e := &agentfile.Error{File: ag.File, Field: fmt.Sprintf("contents.mcpServers[%d]", i), Reason: st.Error}
		if st.State == mcptools.StateIdle {
			warnings = append(warnings, e)
		} else {
			problems = append(problems, e)
		}
	}
	return problems, warnings
}

// missingKey says where an agent's API key was looked for.
func missingKey(file, id string) *agentfile.Error {
	return &agentfile.Error{
		File:  file,
		Field: "contents.apiKeyId",
		Reason: fmt.Sprintf("no key %q in the keys file or the environment (%s); the agent cannot reach its model",
			id, strings.Join(config.EnvNames(id), ", ")),
	}
}

// unpricedModels warns once about each model the agents use that the
// price table leaves out, when there is a price table or a cost budget:
// its calls cost nothing, so no cost budget stops them.
func unpricedModels(res *config.Resolved, agents []*catalog.Agent) []*agentfile.Error {
	costly := res.Budgets.OwnerDefault != nil && res.Budgets.OwnerDefault.Budget.Cost != nil
	if len(res.Prices) == 0 && !costly {
		return nil
	}
	seen := map[string]bool{}
	var out []*agentfile.Error
	for _, ag := range agents {
		name := ag.Model.Name
		if _, ok := res.Prices[name]; ok || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, &agentfile.Error{File: res.ConfigFile, Field: "prices", Reason: fmt.Sprintf("model %q (agent %s) has no price: its calls cost nothing", name, ag.Slug)})
	}
	return out
}

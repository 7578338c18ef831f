package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/config"
)

func (a *app) checkCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Load every agent and describe every tool; report each problem as file: field: reason",
		Long: `Load every agent file the configuration names, run "describe" on every
bash tool, and report each problem on a line of its own as
"file: field: reason". Exits 1 when any agent file or tool does not load.
Warnings (unknown config fields, API keys not found) do not change the exit
status.`,
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
			cat, err := a.loadCatalog(cmd.Context(), res, keys, "")
			if err != nil {
				return err
			}
			snap := cat.Snapshot()
			for _, p := range snap.Errors {
				fmt.Fprintln(a.stdout, p.Error())
			}
			warnings := append([]*agentfile.Error(nil), res.Warnings...)
			for _, ag := range snap.Agents() {
				if !ag.Model.KeyPresent {
					warnings = append(warnings, missingKey(ag.File, ag.Model.APIKeyID))
				}
			}
			for _, w := range warnings {
				fmt.Fprintln(a.stdout, "warning:", w.Error())
			}
			fmt.Fprintf(a.stdout, "%s loaded, %s, %s\n", plural(len(snap.Agents()), "agent"), plural(len(snap.Errors), "problem"), plural(len(warnings), "warning"))
			if len(snap.Errors) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%s loading the agent files and their tools", plural(len(snap.Errors), "problem"))}
			}
			return nil
		},
	}
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

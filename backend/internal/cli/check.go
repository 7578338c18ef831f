package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agents-os/agents/backend/internal/agentfile"
)

func (a *app) checkCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Load every agent and describe every tool; report each problem as file: field: reason",
		Args:  cobra.NoArgs,
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
			problems := append([]*agentfile.Error(nil), res.Warnings...)
			problems = append(problems, snap.Errors...)
			for _, p := range problems {
				fmt.Fprintln(a.stdout, p.Error())
			}
			fmt.Fprintf(a.stdout, "%d agents loaded, %d problems\n", len(snap.Agents()), len(problems))
			if len(snap.Errors) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d agent files or tools did not load", len(snap.Errors))}
			}
			return nil
		},
	}
}

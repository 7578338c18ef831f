package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agents-os/agents/backend/internal/config"
)

func (a *app) pathsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "paths",
		Short: "Print the config file, directories, database and agent files in use",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := a.resolve()
			if err != nil {
				return err
			}
			p := res.Paths()
			tuiLog := tuiLogFile(res)
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					config.Paths
					TUILog string `json:"tuiLog"`
				}{p, tuiLog})
			}
			none := func(s string) string {
				if s == "" {
					return "(none)"
				}
				return s
			}
			list := func(l []string) string {
				if len(l) == 0 {
					return "(none)"
				}
				return strings.Join(l, ", ")
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			for _, row := range [][2]string{
				{"config file", none(p.ConfigFile)},
				{"config dir", p.ConfigDir},
				{"data dir", p.DataDir},
				{"database", p.DB},
				{"api keys file", none(p.APIKeysFile)},
				{"params file", none(p.ParamsFile)},
				{"agent files", list(p.AgentFiles)},
				{"agent dirs", list(p.AgentDirs)},
				{"agents from", p.AgentsFrom},
				{"tui log", tuiLog},
			} {
				fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the paths as JSON")
	return cmd
}

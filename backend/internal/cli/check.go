package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/backend/internal/tool"
	"github.com/agents-os/agents/tools/fakellm"
)

func (a *app) checkCommand() *cobra.Command {
	var offline string
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "check [--db PATH | --attach URL|PATH]",
		Short: "Load every agent and describe every tool; report each problem as file: field: reason",
		Long: `Load every agent file the configuration names, run "describe" on every
bash tool, start every MCP server and list its tools, and report each problem on a line of its own as
"file: field: reason". Exits 1 when any agent file or tool does not load.
The agents stored in the database (--db, the config's, or the default one
when it exists; or those of the server --attach names) are checked as the
server loads them now, their problems reported as "stored agent SLUG:
field: reason": a helper deleted since, a tool outside the directories
allowed today. Without a database, the files alone are checked.
Each agent's line says its model's context window and maximum output
(from the agent file, the config's models, the server's table of
well-known models, or a default) and the input above which its sessions
are compacted.
Warnings (unknown or unsupported fields in the config and agent files, API
keys not found) do not change the exit status. With --offline-model, an
agent whose key is not found talks to the offline model: check says so
instead of warning, and checks the rules file when it names one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			res, err := a.resolve()
			if err != nil {
				return err
			}
			keys, err := res.LoadKeys(a.lookupEnv)
			if err != nil {
				return err
			}
			// The tools are described and the MCP servers started
			// confined as the server would.
			sb := a.toolSandbox(res, nil)
			pool := mcptools.NewPool(mcptools.Options{Sandbox: sb})
			defer pool.Close()
			opts := catalog.Options{MCP: pool, SQLite: sqliteCopies(res), Bash: tool.BashRuntime{Sandbox: sb}}
			db, remote, err := a.checkedStore(ctx, res, cf)
			if err != nil {
				return err
			}
			if db != nil {
				defer db.Close()
				opts.Stored, opts.ToolDirs, opts.WorkDir = catalog.FromStore(db), res.StoredAgentToolDirs, res.WorkDir
			}
			if remote != nil {
				defer remote.Close()
			}
			cat, err := a.loadCatalog(ctx, res, keys, opts)
			if err != nil {
				return err
			}
			snap := cat.Snapshot()
			problems := snap.Errors
			loaded := len(snap.Agents())
			if remote != nil {
				n, p, err := remoteStored(ctx, remote)
				if err != nil {
					return err
				}
				loaded, problems = loaded+n, append(problems, p...)
			}
			warnings := append(append([]*agentfile.Error(nil), res.Warnings...), snap.Warnings...)
			for _, ag := range snap.Agents() {
				p, w := checkMCPServers(ctx, ag)
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
				fmt.Fprintln(a.stdout, windowLine(ag))
				switch {
				case ag.Model.KeyPresent || ag.Model.APIKeyID == "":
				case offline != "":
					fmt.Fprintf(a.stdout, "%s: no key %q: talks to the offline model (%s)\n", ag.Slug, ag.Model.APIKeyID, offline)
				default:
					warnings = append(warnings, missingKey(ag, ag.Model.APIKeyID))
				}
			}
			warnings = append(warnings, unpricedModels(res, snap.Agents())...)
			for _, w := range warnings {
				fmt.Fprintln(a.stdout, "warning:", w.Error())
			}
			fmt.Fprintf(a.stdout, "%s loaded, %s, %s\n", plural(loaded, "agent"), plural(len(problems), "problem"), plural(len(warnings), "warning"))
			if len(problems) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%s loading the agents and their tools", plural(len(problems), "problem"))}
			}
			return nil
		},
	}
	cf.addClientFlags(cmd)
	cmd.Flags().StringVar(&offline, "offline-model", "", "the offline model (a URL, or a rules file) that agents without a key will talk to")
	cmd.Flags().StringVar(&a.flags.DB, "db", "", "database whose stored agents to check too (default: the config's, else $XDG_DATA_HOME/agents/agents.db when it exists)")
	return cmd
}

// checkedStore is where check reads the stored agents: the database
// itself, or the server of --attach, or the server that holds the
// database. A database file that does not exist holds none and is not
// created: check then reads the files alone.
func (a *app) checkedStore(ctx context.Context, res *config.Resolved, cf clientFlags) (store.Store, *client.Client, error) {
	if cf.attach != "" {
		if a.flags.DB != "" {
			return nil, nil, errors.New("--db is the database to check without a server; it does not apply with --attach")
		}
		c, err := a.attach(ctx, cf)
		return nil, c, err
	}
	if !postgres.IsDSN(res.DB) {
		if _, err := os.Stat(res.DB); errors.Is(err, os.ErrNotExist) {
			if a.flags.DB != "" {
				return nil, nil, fmt.Errorf("--db %s: no such database", res.DB)
			}
			return nil, nil, nil
		}
	}
	db, err := openStore(ctx, res.DB, sqlite.Holder{Command: a.command})
	var locked *sqlite.LockedError
	if errors.As(err, &locked) {
		c, err := a.attachHolder(ctx, cf, locked)
		return nil, c, err
	}
	if err != nil {
		return nil, nil, err
	}
	return db, nil, nil
}

// remoteStored is what a server says of its stored agents: how many it
// serves, and the problems of those it refused (and of reading them).
// Its agent files are not its: check reads the files of its own
// configuration.
func remoteStored(ctx context.Context, c *client.Client) (int, []*agentfile.Error, error) {
	res, err := c.Agents.ListAgents(ctx, connect.NewRequest(&agentsv1.ListAgentsRequest{}))
	if err != nil {
		return 0, nil, describe(err)
	}
	n := 0
	for _, ag := range res.Msg.GetAgents() {
		if ag.GetSource() == agentsv1.AgentSource_AGENT_SOURCE_STORED {
			n++
		}
	}
	var problems []*agentfile.Error
	for _, e := range res.Msg.GetErrors() {
		if e.GetFile() == "" {
			problems = append(problems, &agentfile.Error{Agent: e.GetAgent(), Field: e.GetField(), Reason: e.GetReason()})
		}
	}
	return n, problems, nil
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
		e := agentProblem(ag, fmt.Sprintf("contents.mcpServers[%d]", i), st.Error)
		if st.State == mcptools.StateIdle {
			warnings = append(warnings, e)
		} else {
			problems = append(problems, e)
		}
	}
	return problems, warnings
}

// missingKey says where an agent's API key was looked for.
func missingKey(ag *catalog.Agent, id string) *agentfile.Error {
	return agentProblem(ag, "contents.apiKeyId", fmt.Sprintf("no key %q in the keys file or the environment (%s); the agent cannot reach its model",
		id, strings.Join(config.EnvNames(id), ", ")))
}

// agentProblem is a problem of an agent's field, named by its file, or by
// its slug for a stored agent.
func agentProblem(ag *catalog.Agent, field, reason string) *agentfile.Error {
	e := &agentfile.Error{File: ag.Shown, Field: field, Reason: reason}
	if ag.Source == catalog.SourceStored {
		e.Agent = ag.Slug
	}
	return e
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

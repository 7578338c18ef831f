// Package cli wires the agents command line: one cobra command per
// subcommand, all sharing the configuration flags of DESIGN §9.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-os/agents/backend/internal/config"
)

// Version is the binary's version, set at build time with
// -ldflags "-X github.com/agents-os/agents/backend/internal/cli.Version=…".
var Version = "dev"

// app is the state shared by the subcommands of one invocation.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	lookupEnv      func(string) (string, bool)
	flags          config.Flags
	// launcher says this program confines tools (see toolSandbox).
	launcher bool
	// command is the command being run ("serve", "sessions ls"), which a
	// database's lock file names (see sqlite.Holder).
	command string
}

// exitError carries a specific exit status out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Execute runs the command line and returns the process exit status.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return execute(ctx, args, os.Stdin, stdout, stderr, os.LookupEnv, true)
}

// execute is Execute with the input and the environment given, for tests.
// launcher says the program starts as a tool's launcher when asked (see
// sandbox.Main): the agents binary does, and so does this package's test
// binary.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookupEnv func(string) (string, bool), launcher bool) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, lookupEnv: lookupEnv, launcher: launcher}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "agents:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "agents",
		Short:         "An agent operating system: agents, sessions and their clients over one protocol",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			a.command = strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		},
	}
	// --version prints what `agents version` prints.
	root.SetVersionTemplate("agents {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVar(&a.flags.ConfigFile, "config", "", "config file (default: agents.json searched upward, then the user config directory)")
	pf.StringArrayVar(&a.flags.AgentFiles, "agent-file", nil, "agent file to load (repeatable; replaces the config's agent files)")
	pf.StringVarP(&a.flags.Agent, "agent", "a", "", "serve or use only this agent (and its helpers)")
	pf.StringVar(&a.flags.ParamsFile, "params-file", "", "session params, a JSON object name → value")
	pf.StringVar(&a.flags.APIKeysFile, "api-keys", "", `API keys file {"keys": [{"id", "value"}]}`)
	root.AddCommand(a.serveCommand(), a.tuiCommand(), a.runCommand(), a.checkCommand(), a.versionCommand(),
		a.initCommand(), a.pathsCommand(), a.sessionsCommand(), a.agentsCommand(), a.mcpCommand(), a.callsCommand(), a.ownersCommand(), a.schedulesCommand(), a.webhooksCommand())
	return root
}

// addModelFlags gives cmd and its subcommands the limits of the model
// calls of a server this process runs: serve's, or one started in-process.
func (a *app) addModelFlags(cmd *cobra.Command) {
	fs := cmd.PersistentFlags()
	fs.Int64Var(&a.flags.MaxModelOutputBytes, "max-model-output-bytes", 0,
		"largest model answer (text, thinking and tool calls) in bytes (default 4 MiB, or maxModelOutputBytes in the config file)")
	fs.DurationVar(&a.flags.MaxModelCallTime, "max-model-call-time", 0,
		"longest model call, retries included (default 10m, or maxModelCallTime in the config file)")
}

// resolve combines defaults, the config file and the flags.
func (a *app) resolve() (*config.Resolved, error) {
	return config.Resolve(config.Options{LookupEnv: a.lookupEnv, Flags: a.flags})
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(a.stdout, "agents", Version)
			return err
		},
	}
}

// plural counts things in words: "1 session", "2 sessions".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

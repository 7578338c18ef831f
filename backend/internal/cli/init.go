package cli

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// skeleton is what `agents init` writes: a config file, an example agent,
// its bash tool and the offline model's rules for it.
//
//go:embed skeleton
var skeleton embed.FS

func (a *app) initCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a config file, an example agent, its bash tool and offline rules here (never overwrites)",
		Long: `Write agents.json, agents/example.json, agents/tools/hello and
offline-rules.json into DIR (default: the folder it runs in), then print
the commands to try them. Files that already exist are kept as they are.
The commands find agents.json in the folder they run in (or above it);
offline-rules.json scripts the offline model for the example agent, so
it answers with no account and no network.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if err := a.writeSkeleton(dir); err != nil {
				return err
			}
			a.printNextSteps(dir)
			return nil
		},
	}
}

// printNextSteps says what to run after init: the check, a first run
// against the offline model, then the real one.
func (a *app) printNextSteps(dir string) {
	w := a.stdout
	fmt.Fprintln(w, "\nnext:")
	if filepath.Clean(dir) != "." {
		fmt.Fprintf(w, "  cd %s\n", shellQuote(dir))
	}
	fmt.Fprintln(w, "  agents check --offline-model offline-rules.json         # the example agent and its tool, checked")
	fmt.Fprintln(w, `  agents run --offline-model offline-rules.json "hello"  # a first run, offline: no account, no network`)
	fmt.Fprintln(w, "  agents tui --offline-model offline-rules.json           # the same agent in the terminal UI")
	fmt.Fprintln(w, "with a real model: export OPENAI_API_KEY=… (see agents/example.json), then the same commands without --offline-model")
}

// writeSkeleton copies the skeleton into dir, keeping every file that
// already exists.
func (a *app) writeSkeleton(dir string) error {
	return fs.WalkDir(skeleton, "skeleton", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(name, "skeleton"), "/")
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := skeleton.ReadFile(name)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if path.Base(path.Dir(name)) == "tools" {
			mode = 0o755 // bash tools are run directly
		}
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			fmt.Fprintln(a.stdout, "kept   ", target)
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			_ = f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, "created", target)
		return nil
	})
}

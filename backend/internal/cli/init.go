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

// skeleton is what `agents init` writes: a config file, an example agent
// and its bash tool.
//
//go:embed skeleton
var skeleton embed.FS

func (a *app) initCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a config file, an example agent and a bash tool (never overwrites)",
		Long: `Write agents.json, agents/example.json and agents/tools/hello into DIR
(default: the user config directory, $XDG_CONFIG_HOME/agents). Files that
already exist are kept as they are. Then run "agents check".`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			} else {
				res, err := a.resolve()
				if err != nil {
					return err
				}
				dir = res.ConfigDir
			}
			return a.writeSkeleton(dir)
		},
	}
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

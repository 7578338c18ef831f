package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/convfile"
	"github.com/agents-os/agents/backend/internal/errs"
)

// An import sends its files in requests of at most this many bytes of
// content (and files), well under the server's default body limit
// (16 MiB); a file bigger than that goes alone.
const (
	importBatchBytes = 4 << 20
	importBatchFiles = 100
	// maxFileName is the longest name the server takes for a file; a
	// longer path is sent as its base name (the command reports it by its
	// whole path).
	maxFileName = 255
)

func (a *app) sessionsImport(cf *clientFlags) *cobra.Command {
	var agent string
	cmd := &cobra.Command{
		Use:   "import [-a SLUG] PATH…",
		Short: "Import agents-exe conversation files (conv.<uuid>.json, *.session.json) as sessions",
		Long: `Import agents-exe conversation history as sessions. Each PATH is a file,
imported whatever its name, or a directory, searched recursively for the
files agents-exe writes (conv.<uuid>.json) and those kept by name
(NAME.session.json).

Each conversation becomes a session under its agents-exe session id, its
turns oldest first, a fork keeping the id of the session it was forked
from. agents-exe files do not say which agent held them: the sessions are
bound to -a SLUG (default: the only root agent of the agent files, as
for agents run), the agent that continues them. It need not be loaded:
the sessions can be read, exported and forked with --with another agent
all the same.

A file already imported is reported unchanged and left as it is; so is a
session that went on since. A file that is not a conversation is reported
with its path and the reason, and the others are still imported; the exit
status is then 1.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, failed := a.importFiles(args)
			if len(files) == 0 && failed == 0 {
				return fmt.Errorf("no conversation files (conv.<uuid>.json, *.session.json) in %s", strings.Join(args, ", "))
			}
			t := importTally{failed: failed}
			if len(files) == 0 {
				return t.report(a.stderr)
			}
			return a.withClient(cmd.Context(), *cf, func(ctx context.Context, c *client.Client) error {
				if agent == "" {
					root, err := onlyRootAgent(ctx, c)
					if err != nil {
						return err
					}
					agent = root
				}
				if err := a.importAll(ctx, c, agent, files, &t); err != nil {
					return err
				}
				return t.report(a.stderr)
			})
		},
	}
	// This --agent shadows the global one, which would restrict what the
	// in-process server loads: the agent named here need not be loaded.
	cmd.Flags().StringVarP(&agent, "agent", "a", "", "agent the imported sessions continue with; it need not be loaded (default: the only root agent of the agent files, as for agents run)")
	return cmd
}

// importTally counts what became of the files.
type importTally struct{ imported, unchanged, failed int }

// report prints the counts on w; the exit status is 1 when a file
// failed.
func (t importTally) report(w io.Writer) error {
	fmt.Fprintf(w, "%d imported, %d unchanged, %d failed\n", t.imported, t.unchanged, t.failed)
	if t.failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%s could not be imported", plural(t.failed, "file"))}
	}
	return nil
}

// importFiles lists the files the paths name, reporting on stderr (and
// counting) each path that cannot be read.
func (a *app) importFiles(paths []string) (files []string, failed int) {
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			a.importFailed(p, err)
			failed++
			continue
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				a.importFailed(path, err)
				failed++
				return nil
			}
			if !d.IsDir() && convfile.IsConversationFile(path) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			a.importFailed(p, err)
			failed++
		}
	}
	return files, failed
}

func (a *app) importFailed(path string, reason any) {
	var pe *fs.PathError
	if err, ok := reason.(error); ok && errors.As(err, &pe) {
		// The path is said once, in front.
		reason = pe.Err
	}
	fmt.Fprintf(a.stderr, "failed     %s: %v\n", path, reason)
}

// importAll reads the files and sends them in batches, printing each
// file's outcome as its batch is answered.
func (a *app) importAll(ctx context.Context, c *client.Client, agent string, files []string, t *importTally) error {
	var batch []string
	var contents [][]byte
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := a.importBatch(ctx, c, agent, batch, contents, t)
		batch, contents, size = nil, nil, 0
		return err
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			a.importFailed(path, err)
			t.failed++
			continue
		}
		if len(batch) > 0 && (size+len(b) > importBatchBytes || len(batch) == importBatchFiles) {
			if err := flush(); err != nil {
				return err
			}
		}
		batch, contents, size = append(batch, path), append(contents, b), size+len(b)
	}
	return flush()
}

// importBatch sends one request. A batch the server finds too big is
// sent again file by file; a file too big alone is reported as failed.
func (a *app) importBatch(ctx context.Context, c *client.Client, agent string, paths []string, contents [][]byte, t *importTally) error {
	req := &agentsv1.ImportSessionsRequest{Agent: agent}
	for i, p := range paths {
		req.Files = append(req.Files, &agentsv1.ImportFile{Name: fileName(p), Content: contents[i]})
	}
	res, err := c.Sessions.ImportSessions(ctx, connect.NewRequest(req))
	if reason, _ := errorReason(err); err != nil && (reason == errs.CodeBodyTooLarge || connect.CodeOf(err) == connect.CodeResourceExhausted) {
		if len(paths) == 1 {
			a.importFailed(paths[0], describe(err))
			t.failed++
			return nil
		}
		for i := range paths {
			if err := a.importBatch(ctx, c, agent, paths[i:i+1], contents[i:i+1], t); err != nil {
				return err
			}
		}
		return nil
	}
	if err != nil {
		return describe(err)
	}
	results := res.Msg.GetResults()
	if len(results) != len(paths) {
		return fmt.Errorf("the server answered %d results for %s", len(results), plural(len(paths), "file"))
	}
	for i, r := range results {
		switch r.GetStatus() {
		case agentsv1.ImportStatus_IMPORT_STATUS_IMPORTED:
			t.imported++
			fmt.Fprintf(a.stdout, "imported   %s  %s  (%s%s%s)\n", r.GetSessionId(), paths[i], plural(int(r.GetTurnCount()), "turn"), forkNote(r), serverNote(r))
		case agentsv1.ImportStatus_IMPORT_STATUS_UNCHANGED:
			t.unchanged++
			fmt.Fprintf(a.stdout, "unchanged  %s  %s  (already imported)\n", r.GetSessionId(), paths[i])
		default:
			t.failed++
			a.importFailed(paths[i], r.GetReason())
		}
	}
	return nil
}

func forkNote(r *agentsv1.ImportResult) string {
	if r.GetForkedFrom() == "" {
		return ""
	}
	return ", forked from " + r.GetForkedFrom()
}

// serverNote is what the server said of a file it imported: that it
// minted the session's id, or added the turns the file gained.
func serverNote(r *agentsv1.ImportResult) string {
	if r.GetReason() == "" {
		return ""
	}
	return "; " + r.GetReason()
}

// fileName is the name a file is sent under: its path, or its base name
// when the path is longer than the server takes.
func fileName(path string) string {
	if utf8.RuneCountInString(path) <= maxFileName {
		return path
	}
	base := []rune(filepath.Base(path))
	return string(base[:min(len(base), maxFileName)])
}

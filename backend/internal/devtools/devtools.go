// Package devtools runs an agent's DeveloperToolbox: one tool,
// developer_<name>_developer_tools, whose "capability" argument picks
// what it does (read, write or patch a file's lines, list a directory,
// help), as agents-exe names and shapes them. Every path goes through
// the toolbox's file sandbox (filesandbox): a path outside its
// predicate, or a file over its largest size, is a tool error.
package devtools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/dirlist"
	"github.com/agents-os/agents/backend/internal/filesandbox"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// maxAnswer bounds what a call answers, as a bash tool's output is
// bounded.
const maxAnswer = bashtool.DefaultMaxStdout

// New returns a DeveloperToolbox's tool; relative paths are taken from
// workDir.
func New(box agentfile.BuiltinToolbox, workDir string) tool.Tool {
	return &developer{box: box, sandbox: filesandbox.New(box.Sandbox, workDir)}
}

type developer struct {
	box     agentfile.BuiltinToolbox
	sandbox *filesandbox.Sandbox
}

func (d *developer) has(capability string) bool {
	for _, c := range d.box.Capabilities {
		if c == capability {
			return true
		}
	}
	return false
}

const rangesHelp = "Line ranges for file operations. Range formats: 'N' (single line), 'N-M' (range), 'N+' (after line N), 'head' (prepend), 'tail' (append), 'whole' (entire file). " +
	"IMPORTANT: To CREATE a new file, use ranges='head'. For read-file-range: Omit ranges to read entire file. For write-file-range: Use contentBlocks array with one block per range."

// Spec implements tool.Tool. The arguments of a capability are declared
// only when it is enabled.
func (d *developer) Spec() tool.Spec {
	props := map[string]any{
		"capability": map[string]any{"type": "string", "enum": d.box.Capabilities,
			"description": "Capability to execute: " + strings.Join(d.box.Capabilities, ", ")},
	}
	files := d.has("read-file-range") || d.has("write-file-range") || d.has("patch-file")
	if files || d.has("list-directory") {
		props["path"] = map[string]any{"type": "string", "description": "For read-file-range, write-file-range, patch-file: Path to the file; for list-directory: the directory"}
	}
	if files {
		props["ranges"] = map[string]any{"type": "string", "description": rangesHelp}
		props["contentBlocks"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"},
			"description": "For write-file-range: Array of content blocks, where each block corresponds to one range. Use empty strings to delete lines."}
		props["patch"] = map[string]any{"type": "string", "description": "For patch-file: Unified diff patch content to apply"}
	}
	if d.has("list-directory") {
		props["recursive"] = map[string]any{"type": "boolean", "description": "For list-directory: Include subdirectories recursively (default: false)"}
		props["include_hidden"] = map[string]any{"type": "boolean", "description": "For list-directory: Include hidden files/dotfiles (default: false)"}
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": []string{"capability"}, "additionalProperties": false})
	return tool.Spec{
		Name: agentfile.DeveloperToolPrefix + d.box.Name + agentfile.DeveloperToolSuffix,
		Description: "Developer tools for writing and validating agents and tools. " +
			"Use the 'help' capability to get detailed documentation for all available capabilities. " + d.box.Description,
		Parameters: schema,
		Kind:       session.ToolSystem,
		Source:     agentfile.DeveloperToolboxKind + " " + d.box.Name,
	}
}

// Mode implements tool.Tool.
func (d *developer) Mode() session.CallMode { return session.CallAttached }

// Execute implements tool.Tool.
func (d *developer) Execute(_ context.Context, call tool.Call) tool.Result {
	capability := call.Args.String("capability")
	if !d.has(capability) {
		return tool.Failed(fmt.Sprintf("capability %q is not enabled in this toolbox (enabled: %s)", capability, strings.Join(d.box.Capabilities, ", ")))
	}
	var out any
	var err error
	path := call.Args.String("path")
	switch capability {
	case "read-file-range":
		out, err = d.read(path, call.Args.String("ranges"))
	case "write-file-range":
		var blocks []string
		if raw, ok := call.Args.Value("contentBlocks"); ok {
			if jerr := json.Unmarshal(raw, &blocks); jerr != nil {
				return tool.Failed("write-file-range: contentBlocks must be a list of strings")
			}
		}
		out, err = d.write(path, call.Args.String("ranges"), blocks)
	case "patch-file":
		out, err = d.patch(path, call.Args.String("patch"))
	case "list-directory":
		out, err = d.list(path, call.Args.Bool("recursive"), call.Args.Bool("include_hidden"))
	case "help":
		return tool.OK(d.help())
	}
	if err != nil {
		return tool.Failed(fmt.Sprintf("%s: %v", capability, err))
	}
	text, jerr := json.Marshal(out)
	if jerr != nil {
		return tool.Failed(jerr.Error())
	}
	return tool.OK(bashtool.Cut(string(text), maxAnswer+1024))
}

// readResult is read-file-range's answer.
type readResult struct {
	Path           string `json:"path"`
	Content        string `json:"content"`
	LinesRead      int    `json:"linesRead"`
	TotalLineCount int    `json:"totalLineCount"`
	Truncated      bool   `json:"truncated,omitempty"`
	Note           string `json:"note,omitempty"`
}

func (d *developer) read(path, ranges string) (any, error) {
	real, err := d.sandbox.Read(path)
	if err != nil {
		return nil, err
	}
	data, err := readFile(real)
	if err != nil {
		return nil, err
	}
	lines := splitLines(string(data))
	specs, err := parseRanges(ranges)
	if err != nil {
		return nil, err
	}
	res := readResult{Path: path, TotalLineCount: len(lines)}
	var b strings.Builder
	for _, r := range specs {
		from, to := r.readSpan(len(lines))
		for n := from; n <= to; n++ {
			line := fmt.Sprintf("%d\t%s\n", n, lines[n-1])
			if b.Len()+len(line) > maxAnswer {
				res.Truncated = true
				res.Note = fmt.Sprintf("lines from %d on are left out: an answer holds at most %d bytes; read a smaller range", n, maxAnswer)
				break
			}
			b.WriteString(line)
			res.LinesRead++
		}
		if res.Truncated {
			break
		}
	}
	res.Content = b.String()
	return res, nil
}

// writeResult is write-file-range's answer.
type writeResult struct {
	Path           string `json:"path"`
	RangesModified int    `json:"rangesModified"`
	LinesWritten   int    `json:"linesWritten"`
}

func (d *developer) write(path, ranges string, blocks []string) (any, error) {
	if strings.TrimSpace(ranges) == "" {
		return nil, errors.New("ranges are required (use 'head' to create a file)")
	}
	specs, err := parseRanges(ranges)
	if err != nil {
		return nil, err
	}
	if len(blocks) != len(specs) {
		return nil, fmt.Errorf("number of content blocks (%d) must match the number of ranges (%d)", len(blocks), len(specs))
	}
	real, err := d.sandbox.Write(path)
	if err != nil {
		return nil, err
	}
	data, err := readFile(real)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if !exists {
		for _, r := range specs {
			if r.kind == rangeLines || r.kind == rangeAfter {
				return nil, fmt.Errorf("file not found: %s (create it with ranges 'head', 'tail' or 'whole')", path)
			}
		}
	}
	lines := splitLines(string(data))
	edited, written, err := applyRanges(lines, specs, blocks)
	if err != nil {
		return nil, err
	}
	text := strings.Join(edited, "\n")
	if len(edited) > 0 && (!exists || len(data) == 0 || bytes.HasSuffix(data, []byte("\n"))) {
		text += "\n"
	}
	if err := d.save(path, real, []byte(text)); err != nil {
		return nil, err
	}
	return writeResult{Path: path, RangesModified: len(specs), LinesWritten: written}, nil
}

// patchResult is patch-file's answer.
type patchResult struct {
	Path          string `json:"path"`
	HunksApplied  int    `json:"hunksApplied"`
	HunksRejected int    `json:"hunksRejected"`
	LinesChanged  int64  `json:"linesChanged"`
}

func (d *developer) patch(path, patch string) (any, error) {
	if strings.TrimSpace(patch) == "" {
		return nil, errors.New("no patch given")
	}
	real, err := d.sandbox.Write(path)
	if err != nil {
		return nil, err
	}
	data, err := readFile(real)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	out, file, err := ApplyPatch(data, patch)
	if err != nil {
		return nil, err
	}
	if err := d.save(path, real, out); err != nil {
		return nil, err
	}
	res := patchResult{Path: path, HunksApplied: len(file.TextFragments)}
	for _, f := range file.TextFragments {
		res.LinesChanged += f.LinesAdded + f.LinesDeleted
	}
	return res, nil
}

// ApplyPatch applies a unified diff of one file, or its hunks alone (as
// agents-exe takes them: the file is the one named), to data, the file's
// content (nil for a file not there yet). It returns the new content and
// the diff's file, or why the patch was not applied.
func ApplyPatch(data []byte, patch string) ([]byte, *gitdiff.File, error) {
	if strings.HasPrefix(strings.TrimLeft(patch, "\n"), "@@") {
		patch = "--- a/file\n+++ b/file\n" + strings.TrimLeft(patch, "\n")
	}
	if !strings.HasSuffix(patch, "\n") {
		patch += "\n"
	}
	files, _, err := gitdiff.Parse(strings.NewReader(patch))
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("the patch is not a unified diff: %v", err)
	case len(files) != 1:
		return nil, nil, fmt.Errorf("the patch must change one file, it changes %d", len(files))
	case files[0].IsBinary:
		return nil, nil, errors.New("binary patches are not applied")
	}
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, bytes.NewReader(data), files[0]); err != nil {
		return nil, nil, fmt.Errorf("the patch does not apply (nothing was changed): %v", err)
	}
	return out.Bytes(), files[0], nil
}

func (d *developer) list(path string, recursive, hidden bool) (any, error) {
	if path == "" {
		path = "."
	}
	real, err := d.sandbox.Dir(path)
	if err != nil {
		return nil, err
	}
	return dirlist.List(real, dirlist.Request{Recursive: recursive, Hidden: hidden}, d.sandbox.Allows)
}

// save writes data over the file at real (a path with no link on it)
// whole or not at all: to a file beside it, then renamed over it. A file
// over the sandbox's largest size is refused.
func (d *developer) save(path, real string, data []byte) error {
	if err := d.sandbox.CheckSize(path, int64(len(data))); err != nil {
		return fmt.Errorf("the result is refused: %v", err)
	}
	mode := fs.FileMode(0o644)
	if info, err := os.Lstat(real); err == nil {
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		mode = info.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(real), "."+filepath.Base(real)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), real)
}

// readFile reads the file at real without following a link that took
// the place of its last part since the sandbox judged it.
func readFile(real string) ([]byte, error) {
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(bufio.NewReader(f))
	return b.Bytes(), err
}

// splitLines splits text into lines, without their ends; a final line
// end starts no line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

func (d *developer) help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s%s: pass \"capability\" and its arguments.\n", agentfile.DeveloperToolPrefix, d.box.Name, agentfile.DeveloperToolSuffix)
	docs := map[string]string{
		"read-file-range":  "read-file-range {path, ranges?}: the file's lines as \"N<TAB>line\"; ranges like \"1-10,20-30\", \"5\", \"40+\"; omit ranges for the whole file.",
		"write-file-range": "write-file-range {path, ranges, contentBlocks}: replaces each range with its block (one block per range, \"\" deletes the lines); ranges refer to the file before the call; 'head' prepends (and creates a file), 'tail' appends, 'whole' replaces everything, 'N+' inserts after line N.",
		"patch-file":       "patch-file {path, patch}: applies a unified diff (hunks starting with @@; ---/+++ headers optional); every hunk's context must match, or nothing is changed.",
		"list-directory":   "list-directory {path?, recursive?, include_hidden?}: the directory's entries with type, size and modification time.",
		"help":             "help: this text.",
	}
	for _, c := range d.box.Capabilities {
		b.WriteString("- " + docs[c] + "\n")
	}
	fmt.Fprintf(&b, "Paths are relative to %s. Allowed paths: %s.", d.sandbox.WorkDir(), d.box.Sandbox.Predicate)
	if max := d.sandbox.MaxFileSize(); max > 0 {
		fmt.Fprintf(&b, " Files over %d bytes are refused.", max)
	}
	return b.String()
}

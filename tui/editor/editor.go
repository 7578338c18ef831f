// Package editor edits a JSON document in the user's editor the way
// kubectl edit does: the document goes to a file below a few comment
// lines (what is edited, how to cancel, and the error of the last try),
// the editor runs, and what it saved comes back without the comment
// lines. An emptied file, or one saved unchanged, cancels the edit; a
// document that is not JSON, or that the server refuses, goes back to the
// editor with the error on top. The terminal UI and the command line
// share it, each running the editor its own way.
package editor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Command is the user's editor, as the words of a command line:
// $VISUAL, else $EDITOR, else vi.
func Command(getenv func(string) string) []string {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if words := strings.Fields(getenv(v)); len(words) > 0 {
			return words
		}
	}
	return []string{"vi"}
}

// Cmd is the command that edits path in the user's editor.
func Cmd(getenv func(string) string, path string) *exec.Cmd {
	argv := Command(getenv)
	return exec.Command(argv[0], append(argv[1:], path)...)
}

// Edit is one document's edit, across the tries it takes.
type Edit struct {
	intro []string
	// doc is the document as the file last held it, without comments:
	// saving it so again is no change.
	doc string
}

// New starts the edit of doc; intro are the lines that say what is
// edited, shown as comments above it.
func New(doc string, intro ...string) *Edit {
	return &Edit{intro: intro, doc: pretty(doc)}
}

// pretty indents a document written on one line, so there is something
// to edit; one already laid out is kept as its author wrote it.
func pretty(doc string) string {
	if strings.Contains(strings.TrimSpace(doc), "\n") {
		return doc
	}
	var b bytes.Buffer
	if json.Indent(&b, []byte(doc), "", "  ") != nil {
		return doc
	}
	return b.String() + "\n"
}

// Content is the file to hand the editor: the intro, how to cancel and
// the error of the last try (when err is not nil) as comment lines, then
// the document.
func (e *Edit) Content(err error) []byte {
	var b strings.Builder
	for _, l := range e.intro {
		b.WriteString("# " + l + "\n")
	}
	b.WriteString("# Lines starting with # are ignored. Save an empty file, or this one unchanged, to cancel.\n")
	if err != nil {
		b.WriteString("#\n")
		for l := range strings.SplitSeq(strings.TrimRight(err.Error(), "\n"), "\n") {
			b.WriteString("# error: " + l + "\n")
		}
	}
	b.WriteString(e.doc)
	return []byte(b.String())
}

// Outcome is what a saved file asks for.
type Outcome int

const (
	// Changed: the document is to be sent.
	Changed Outcome = iota
	// Emptied: the file was emptied, the edit is cancelled.
	Emptied
	// Unchanged: the file was saved as it was given, the edit is
	// cancelled.
	Unchanged
)

// Take reads what the editor saved: the document without the comment
// lines, and what it asks for. Every line whose first character other
// than a space is # goes: no line of a JSON document starts so, since a
// JSON string holds no line break.
func (e *Edit) Take(saved []byte) (string, Outcome) {
	var kept []string
	for l := range strings.SplitSeq(string(saved), "\n") {
		if !strings.HasPrefix(strings.TrimLeft(l, " \t"), "#") {
			kept = append(kept, l)
		}
	}
	doc := strings.Join(kept, "\n")
	switch {
	case strings.TrimSpace(doc) == "":
		return "", Emptied
	case strings.TrimSpace(doc) == strings.TrimSpace(e.doc):
		return doc, Unchanged
	}
	e.doc = doc
	return doc, Changed
}

// Valid says where a document is not JSON, by line and column.
func Valid(doc string) error {
	var v json.RawMessage
	err := json.Unmarshal([]byte(doc), &v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		// Offset counts the bytes read, the one at fault included.
		line, col := position(doc, max(syn.Offset-1, 0))
		return fmt.Errorf("not JSON: line %d, column %d: %s", line, col, syn.Error())
	}
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return nil
}

// position is the line and column, from 1, of the byte at offset.
func position(doc string, offset int64) (line, col int) {
	before := doc[:min(int(offset), len(doc))]
	line = strings.Count(before, "\n") + 1
	return line, len(before) - strings.LastIndex(before, "\n")
}

// TempFile writes content to a new file, readable by its owner only (a
// definition can name what is not for everyone), named so an editor
// knows it holds JSON; the caller removes it.
func TempFile(content []byte) (string, error) {
	f, err := os.CreateTemp("", "agents-agent-*.json")
	if err != nil {
		return "", err
	}
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// Package skills reads Agent Skills: folders holding a SKILL.md that
// begins with YAML front matter (name, description and a few optional
// fields) and goes on with instructions in Markdown, checked as the
// Agent Skills specification (agentskills.io) says. A skill's other
// files (scripts/, references/, assets/) are read only when asked for.
//
// The package knows the format only; the tools that offer a skill to a
// model are built elsewhere (see disclosure).
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// The limits of the specification.
const (
	MaxNameLength          = 64
	MaxDescriptionLength   = 1024
	MaxCompatibilityLength = 500
)

// maxFileSize bounds the SKILL.md read: the specification recommends
// instructions of a few thousand tokens, and a file far past that is
// a mistake, not a skill.
const maxFileSize = 256 << 10

// Skill is one loaded skill.
type Skill struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	Metadata      map[string]string
	// AllowedTools are the tools the skill says it may use (the
	// specification's experimental "allowed-tools"); reported, not
	// enforced.
	AllowedTools []string
	// Body is the instructions: SKILL.md after its front matter.
	Body string
	// Dir is the skill's folder, absolute; File its SKILL.md.
	Dir  string
	File string
}

// Error is a SKILL.md that breaks a rule of the specification.
type Error struct {
	File  string
	Field string // the front matter field, "" for the file as a whole
	Rule  string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Rule
	}
	return e.File + ": " + e.Field + ": " + e.Rule
}

// Load reads the SKILL.md at file. warnings are problems that do not
// stop the skill from loading (a front matter field the specification
// does not define); err, an *Error, is one that does.
func Load(file string) (s *Skill, warnings []string, err error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, nil, err
	}
	data, err := readBounded(abs, maxFileSize)
	if err != nil {
		return nil, nil, &Error{File: abs, Rule: err.Error()}
	}
	return Parse(abs, data)
}

// Parse reads a SKILL.md's content; file is its path, whose folder the
// skill's name must match.
func Parse(file string, data []byte) (*Skill, []string, error) {
	fail := func(field, format string, args ...any) (*Skill, []string, error) {
		return nil, nil, &Error{File: file, Field: field, Rule: fmt.Sprintf(format, args...)}
	}
	if !utf8.Valid(data) {
		return fail("", "is not UTF-8 text")
	}
	front, body, ok := splitFrontMatter(string(data))
	if !ok {
		return fail("", "must begin with YAML front matter between two lines of \"---\" (name and description at least)")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		return fail("", "the front matter is not valid YAML: %v", err)
	}
	if len(doc.Content) == 0 {
		return fail("", "the front matter is empty; it must give name and description")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fail("", "the front matter must be a mapping of fields (name: …, description: …)")
	}
	s := &Skill{File: file, Dir: filepath.Dir(file), Body: body}
	var warnings []string
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, value := root.Content[i], root.Content[i+1]
		if key.Kind != yaml.ScalarNode {
			return fail("", "line %d: a field name must be plain text", key.Line)
		}
		name := key.Value
		if seen[name] {
			return fail(name, "given twice")
		}
		seen[name] = true
		var err error
		switch name {
		case "name":
			s.Name, err = text(value)
		case "description":
			s.Description, err = text(value)
		case "license":
			s.License, err = text(value)
		case "compatibility":
			s.Compatibility, err = text(value)
		case "metadata":
			s.Metadata, err = stringMap(value)
		case "allowed-tools":
			s.AllowedTools, err = toolList(value)
		default:
			warnings = append(warnings, fmt.Sprintf("%s: %s: not a field of the Agent Skills specification; ignored", file, name))
		}
		if err != nil {
			return fail(name, "%v", err)
		}
	}
	if !seen["name"] {
		return fail("name", "required field is missing")
	}
	if why := NameProblem(s.Name); why != "" {
		return fail("name", "%s", why)
	}
	if folder := filepath.Base(s.Dir); folder != s.Name {
		return fail("name", "%q must be the name of the skill's folder, %q", s.Name, folder)
	}
	switch n := utf8.RuneCountInString(s.Description); {
	case !seen["description"]:
		return fail("description", "required field is missing")
	case strings.TrimSpace(s.Description) == "":
		return fail("description", "must not be empty")
	case n > MaxDescriptionLength:
		return fail("description", "is %d characters; at most %d", n, MaxDescriptionLength)
	}
	if n := utf8.RuneCountInString(s.Compatibility); seen["compatibility"] && (strings.TrimSpace(s.Compatibility) == "" || n > MaxCompatibilityLength) {
		return fail("compatibility", "must be 1 to %d characters when given (it is %d)", MaxCompatibilityLength, n)
	}
	return s, warnings, nil
}

// NameProblem says why name is not a skill name, "" when it is one: 1 to
// 64 lower-case letters a-z, digits and hyphens, with no hyphen first,
// last or next to another. (The specification allows lower-case letters
// of any script; the name is part of tool names, which models accept in
// ASCII only.)
func NameProblem(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case len(name) > MaxNameLength:
		return fmt.Sprintf("%q is %d characters; at most %d", name, len(name), MaxNameLength)
	case strings.IndexFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') }) >= 0:
		return fmt.Sprintf("%q may hold only lower-case letters a-z, digits and hyphens", name)
	case name[0] == '-' || name[len(name)-1] == '-':
		return fmt.Sprintf("%q must not begin or end with a hyphen", name)
	case strings.Contains(name, "--"):
		return fmt.Sprintf("%q must not hold two hyphens in a row", name)
	}
	return ""
}

// splitFrontMatter cuts content into its front matter and its body: the
// first line is "---", and the front matter runs to the next line that
// is "---". A byte order mark and trailing spaces on the fences are
// forgiven, as editors leave them.
func splitFrontMatter(content string) (front, body string, ok bool) {
	content = strings.TrimPrefix(content, "\uFEFF")
	first, rest, found := strings.Cut(content, "\n")
	if !found || strings.TrimRight(first, " \t\r") != "---" {
		return "", "", false
	}
	var lines []string
	for {
		line, after, more := strings.Cut(rest, "\n")
		if strings.TrimRight(line, " \t\r") == "---" {
			return strings.Join(lines, "\n"), after, true
		}
		if !more {
			return "", "", false
		}
		lines = append(lines, line)
		rest = after
	}
}

// text reads a field that must be one plain value.
func text(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", errors.New("must be text")
	}
	return n.Value, nil
}

// stringMap reads "metadata": a mapping of text to text.
func stringMap(n *yaml.Node) (map[string]string, error) {
	if n.Kind != yaml.MappingNode {
		return nil, errors.New("must be a mapping of names to text values")
	}
	out := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return nil, fmt.Errorf("line %d: each entry must map a name to a text value", k.Line)
		}
		if _, dup := out[k.Value]; dup {
			return nil, fmt.Errorf("%s: given twice", k.Value)
		}
		out[k.Value] = v.Value
	}
	return out, nil
}

// toolList reads "allowed-tools": tool names separated by spaces, as the
// specification writes it; a YAML list of names is taken too.
func toolList(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return strings.Fields(n.Value), nil
	case yaml.SequenceNode:
		var out []string
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				return nil, errors.New("must be tool names separated by spaces")
			}
			out = append(out, item.Value)
		}
		return out, nil
	}
	return nil, errors.New("must be tool names separated by spaces")
}

// readBounded reads a file of at most max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("file does not exist")
		}
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("is larger than %d KiB; a skill's instructions should be far shorter (move the rest to references/)", max>>10)
	}
	return data, nil
}

// maxDepth bounds how deep Find looks for skills under a source folder.
const maxDepth = 6

// Find lists the SKILL.md files of a source folder, sorted: the folder's
// own when it is a skill, else those of the folders under it. A skill's
// own folder is not searched further (its files are its own), nor is a
// hidden folder.
func Find(root string) ([]string, error) {
	info, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist", root)
		}
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", root)
	}
	var found []string
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if path != root && (strings.HasPrefix(d.Name(), ".") || strings.Count(rel, string(filepath.Separator)) >= maxDepth) {
			return filepath.SkipDir
		}
		file := filepath.Join(path, FileName)
		if st, err := os.Stat(file); err == nil && st.Mode().IsRegular() {
			found = append(found, file)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(found)
	return found, nil
}

// maxListed bounds the files Files lists.
const maxListed = 200

// Files lists the skill's files, relative to its folder and sorted, for
// a model to pick from; hidden files and folders are left out. more says
// the list was cut at its bound.
func (s *Skill) Files() (files []string, more bool, err error) {
	err = filepath.WalkDir(s.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != s.Dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if len(files) == maxListed {
			more = true
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(s.Dir, path)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	return files, more, err
}

// Read returns a file of the skill, named relative to its folder, at
// most max bytes of it (cut at a character, with a note); a folder is
// listed instead. Nothing outside the skill's folder is read: not
// through "..", an absolute path or a symbolic link.
func (s *Skill) Read(rel string, max int) (string, error) {
	if rel == "" || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%q: give a path relative to the skill's folder, such as references/guide.md", rel)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q is outside the skill's folder", rel)
	}
	root, err := filepath.EvalSymlinks(s.Dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, clean))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("the skill %s has no file %q", s.Name, rel)
		}
		return "", err
	}
	if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q leads outside the skill's folder", rel)
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if info.IsDir() {
		entries, err := os.ReadDir(real)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			b.WriteString(e.Name())
			if e.IsDir() {
				b.WriteByte('/')
			}
			b.WriteByte('\n')
		}
		return b.String(), nil
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%q is not a regular file", rel)
	}
	f, err := os.Open(real)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(trimPartialRune(data[:min(len(data), max)])) {
		return "", fmt.Errorf("%q is not text (%d bytes); it is not shown", rel, info.Size())
	}
	if len(data) > max {
		kept := trimPartialRune(data[:max])
		return fmt.Sprintf("%s\n[file cut: only the first %d of %d bytes are shown]", kept, len(kept), info.Size()), nil
	}
	return string(data), nil
}

// trimPartialRune drops a character cut in two at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

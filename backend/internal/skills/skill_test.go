package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write makes dir/name/SKILL.md with content and returns its path.
func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	folder := filepath.Join(dir, name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(folder, FileName)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// agents-exe's own example skill loads, every field read.
func TestASkillOfAgentsExeLoads(t *testing.T) {
	t.Parallel()
	path := write(t, t.TempDir(), "pdf-processing", `---
name: pdf-processing
description: Extract text and tables from PDF files.
license: Apache-2.0
compatibility: Requires poppler-utils
metadata:
  author: agents-exe
  version: "1.0"
allowed-tools: Bash(pdftotext:*) Read
---

# PDF Processing
`)
	s, warnings, err := Load(path)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("Load: %v, warnings %v", err, warnings)
	}
	if s.Name != "pdf-processing" || s.License != "Apache-2.0" || s.Metadata["version"] != "1.0" || len(s.AllowedTools) != 2 ||
		!strings.Contains(s.Body, "# PDF Processing") || strings.Contains(s.Body, "description:") {
		t.Errorf("skill = %+v", s)
	}
}

// Each rule of the specification refuses a SKILL.md that breaks it,
// naming the file, the field and the rule.
func TestASkillThatBreaksARuleIsRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxDescriptionLength+1)
	for _, tc := range []struct {
		folder, content, want string
	}{
		{"plain", "# no front matter\n", "must begin with YAML front matter"},
		{"open", "---\nname: open\ndescription: never closed\n", "must begin with YAML front matter"},
		{"bad-yaml", "---\nname: [bad-yaml\n---\n", "not valid YAML"},
		{"listy", "---\n- name\n---\n", "must be a mapping"},
		{"nameless", "---\ndescription: d\n---\n", "name: required field is missing"},
		{"Upper", "---\nname: Upper\ndescription: d\n---\n", `name: "Upper" may hold only lower-case letters`},
		{"-lead", "---\nname: -lead\ndescription: d\n---\n", "must not begin or end with a hyphen"},
		{"two--hyphens", "---\nname: two--hyphens\ndescription: d\n---\n", "two hyphens in a row"},
		{strings.Repeat("a", 65), "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", "at most 64"},
		{"folder", "---\nname: other\ndescription: d\n---\n", `name: "other" must be the name of the skill's folder, "folder"`},
		{"undescribed", "---\nname: undescribed\n---\n", "description: required field is missing"},
		{"blank", "---\nname: blank\ndescription: \"  \"\n---\n", "description: must not be empty"},
		{"wordy", "---\nname: wordy\ndescription: " + long + "\n---\n", "description: is 1025 characters; at most 1024"},
		{"compat", "---\nname: compat\ndescription: d\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n", "compatibility: must be 1 to 500 characters"},
		{"meta", "---\nname: meta\ndescription: d\nmetadata:\n  nested:\n    a: b\n---\n", "metadata: line"},
		{"twice", "---\nname: twice\nname: twice\ndescription: d\n---\n", "given twice"},
	} {
		path := write(t, t.TempDir(), tc.folder, tc.content)
		_, _, err := Load(path)
		if err == nil {
			t.Errorf("%s: loaded, want it refused", tc.folder)
			continue
		}
		if !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q, want it to name %s and say %q", tc.folder, err, path, tc.want)
		}
	}
}

// A field the specification does not define is a warning, not a refusal.
func TestAnUnknownFieldIsAWarning(t *testing.T) {
	t.Parallel()
	path := write(t, t.TempDir(), "extra", "---\nname: extra\ndescription: d\nversion: 2\n---\nbody\n")
	s, warnings, err := Load(path)
	if err != nil || s == nil {
		t.Fatalf("Load: %v", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "version: not a field of the Agent Skills specification") {
		t.Errorf("warnings = %v", warnings)
	}
}

// Find finds the skills of a folder, not those inside a skill's own
// folder nor hidden ones; a skill's folder given itself is its skill.
func TestFindFindsEachSkillOnce(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a := write(t, root, "a", "x")
	b := write(t, filepath.Join(root, "group"), "b", "x")
	write(t, filepath.Join(root, "a"), "inner", "x")
	write(t, filepath.Join(root, ".hidden"), "c", "x")
	got, err := Find(root)
	if err != nil || strings.Join(got, ",") != a+","+b {
		t.Errorf("Find = %v, %v; want %s and %s", got, err, a, b)
	}
	if got, err := Find(filepath.Dir(a)); err != nil || len(got) != 1 || got[0] != a {
		t.Errorf("Find of a skill's folder = %v, %v", got, err)
	}
	if _, err := Find(filepath.Join(root, "nowhere")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Find of no folder: %v", err)
	}
}

// Read reads the skill's files, lists its folders, cuts what is long,
// and reads nothing outside the skill's folder.
func TestReadStaysInTheSkillsFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	path := write(t, root, "s", "---\nname: s\ndescription: d\n---\n")
	s, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, "references"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "references", "guide.md"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "secret"), filepath.Join(s.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Read("references/guide.md", 100); err != nil || got != "0123456789" {
		t.Errorf("Read = %q, %v", got, err)
	}
	if got, err := s.Read("references/guide.md", 4); err != nil || !strings.HasPrefix(got, "0123\n[file cut") {
		t.Errorf("Read cut = %q, %v", got, err)
	}
	if got, err := s.Read(".", 100); err != nil || !strings.Contains(got, "references/\n") || !strings.Contains(got, FileName) {
		t.Errorf("Read of the folder = %q, %v", got, err)
	}
	for _, rel := range []string{"../secret", "/etc/passwd", "link", "references/../../secret"} {
		if got, err := s.Read(rel, 100); err == nil || strings.Contains(got, "secret") {
			t.Errorf("Read(%q) = %q, %v; want it refused", rel, got, err)
		}
	}
}

package editor

import (
	"errors"
	"strings"
	"testing"
)

func TestTakeStripsTheCommentsAndTellsACancel(t *testing.T) {
	t.Parallel()
	e := New(`{"tag": "OpenAIAgentDescription", "contents": {"slug": "a"}}`, "Editing agent a, version 3.")
	content := string(e.Content(errors.New("contents.modelUrl: required\nsecond line")))
	for _, want := range []string{
		"# Editing agent a, version 3.\n",
		"# error: contents.modelUrl: required\n# error: second line\n",
		"{\n  \"tag\": \"OpenAIAgentDescription\",\n", // one line laid out
	} {
		if !strings.Contains(content, want) {
			t.Errorf("content lacks %q:\n%s", want, content)
		}
	}
	if _, out := e.Take([]byte(content)); out != Unchanged {
		t.Errorf("the file saved as given: %v, want Unchanged", out)
	}
	if _, out := e.Take([]byte("# only a comment\n\n  \n")); out != Emptied {
		t.Errorf("a file of comments: %v, want Emptied", out)
	}
	edited := strings.Replace(content, `"slug": "a"`, `"slug": "a", "announce": "#1"`, 1)
	doc, out := e.Take([]byte(edited))
	if out != Changed || strings.Contains(doc, "# ") || !strings.Contains(doc, `"announce": "#1"`) {
		t.Errorf("an edited file: %v\n%s", out, doc)
	}
	// The next try starts from the edited document: saving it again
	// unchanged cancels.
	if _, out := e.Take(e.Content(errors.New("refused"))); out != Unchanged {
		t.Errorf("the reopened file saved as given: %v, want Unchanged", out)
	}
}

func TestValidSaysWhere(t *testing.T) {
	t.Parallel()
	if err := Valid("{\n  \"a\": 1\n}"); err != nil {
		t.Errorf("valid JSON: %v", err)
	}
	err := Valid("{\n  \"a\": 1,\n  oops\n}")
	if err == nil || !strings.Contains(err.Error(), "not JSON: line 3, column 3") {
		t.Errorf("err = %v, want line 3, column 3", err)
	}
	if err := Valid(`{"a": 1`); err == nil {
		t.Errorf("a truncated document is valid")
	}
}

func TestCommand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"EDITOR": "code --wait"}
	if got := Command(func(k string) string { return env[k] }); strings.Join(got, " ") != "code --wait" {
		t.Errorf("Command = %q", got)
	}
	env["VISUAL"] = "nvim"
	if got := Command(func(k string) string { return env[k] }); strings.Join(got, " ") != "nvim" {
		t.Errorf("Command with $VISUAL = %q", got)
	}
	if got := Command(func(string) string { return "" }); got[0] != "vi" {
		t.Errorf("Command without either = %q", got)
	}
}

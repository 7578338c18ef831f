package bashtool

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestRunReportsStderrLinesAsProgressWhileRunning(t *testing.T) {
	tool := mustDescribe(t, "progress.sh")
	goOn := filepath.Join(t.TempDir(), "go-on")
	var mu sync.Mutex
	var lines []string
	res := tool.Run(context.Background(), nil, Env{
		Extra: map[string]string{"GO_ON_FILE": goOn},
		OnProgress: func(line string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, line)
			if line == "step 1 of 3" {
				if err := os.WriteFile(goOn, nil, 0o644); err != nil {
					t.Error(err)
				}
			}
		},
	})
	if res.IsError || res.Text != "result\n" {
		t.Fatalf("Run = %+v, want success", res)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"step 1 of 3", "step 2 of 3", "step 3 of 3"}
	if !slices.Equal(lines, want) {
		t.Errorf("progress = %q, want %q", lines, want)
	}
	if wantStderr := "step 1 of 3\nstep 2 of 3\r\n\n   \nstep 3 of 3"; res.Stderr != wantStderr {
		t.Errorf("Stderr = %q, want all of it, as written", res.Stderr)
	}
}

func TestProgressLines(t *testing.T) {
	long := strings.Repeat("é", MaxProgressLine) // two bytes each
	for _, tc := range []struct {
		name   string
		writes []string
		want   []string
	}{
		{"newline, CRLF and carriage return end lines", []string{"a\nb\r\nc\rd\n"}, []string{"a", "b", "c", "d"}},
		{"a line split across writes", []string{"hal", "f a li", "ne\nnext"}, []string{"half a line", "next"}},
		{"blank lines are skipped", []string{"\n\n \t \nx\n\r\n"}, []string{"x"}},
		{"the last line needs no newline", []string{"no newline"}, []string{"no newline"}},
		{"invalid UTF-8 is replaced", []string{"ok \xff end\n"}, []string{"ok \uFFFD end"}},
		{"a long line is cut on a character boundary", []string{"x" + long + "\nafter\n"},
			[]string{"x" + strings.Repeat("é", (MaxProgressLine-1)/2), "after"}},
		{"replacement characters do not push a line over the cap", []string{strings.Repeat("\xffa", 500) + "\n"},
			[]string{strings.Repeat("\uFFFDa", MaxProgressLine/4)}},
		{"a long line is cut across writes", []string{long[:100], long[100:], "\n"},
			[]string{long[:MaxProgressLine]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			p := newProgressLines(func(line string) { got = append(got, line) })
			for _, w := range tc.writes {
				if n, err := p.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			p.close()
			if !slices.Equal(got, tc.want) {
				t.Errorf("lines = %q, want %q", got, tc.want)
			}
			for _, line := range got {
				if len(line) > MaxProgressLine || !utf8.ValidString(line) {
					t.Errorf("line of %d bytes (valid UTF-8: %v) exceeds the cap or is invalid", len(line), utf8.ValidString(line))
				}
			}
		})
	}
}

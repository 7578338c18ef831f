package tui

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/api/client"
)

// A server that is not there: Run must still start, take the screen and
// end with its context, and log only to the log file.
func TestRunEndsWithItsContext(t *testing.T) {
	c, err := client.Dial("http://127.0.0.1:1", "")
	if err != nil {
		t.Fatal(err)
	}
	in, _ := io.Pipe()
	var out bytes.Buffer
	logFile := filepath.Join(t.TempDir(), "tui.log")
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := Run(ctx, c, Options{Input: in, Output: &out, LogFile: logFile}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(out.String(), "\x1b[?1049h") {
		t.Errorf("the alternate screen was not entered:\n%q", out.String())
	}
	if _, err := os.Stat(logFile); err != nil {
		t.Errorf("log file: %v", err)
	}
}

func TestRunRefusesABadKeymap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keymap.json")
	if err := os.WriteFile(path, []byte(`{"no_such_action": ["x"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Run(t.Context(), &client.Client{}, Options{KeymapFile: path})
	if err == nil || !strings.Contains(err.Error(), "no_such_action") {
		t.Fatalf("Run: %v, want the unknown action named", err)
	}
}

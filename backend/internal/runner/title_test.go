package runner_test

import (
	"context"
	"testing"

	"github.com/agents-os/agents/backend/internal/runner"
)

// A title is shown on terminals, in lists and in headers: the control
// characters a client or a first message put in it (an escape sequence
// that would retitle or drive the terminal) are not kept, whichever way
// the title is set.
func TestATitleKeepsNoControlCharacters(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, answer)
	ctx := context.Background()
	evil := "a\x1b]0;owned\x07b\u009bc\td"
	v, err := k.run.CreateSession(ctx, "me", runner.CreateRequest{Agent: "bench", Title: evil})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Meta.Title; got != "a]0;ownedbc d" {
		t.Errorf("created with title %q", got)
	}
	meta, err := k.run.RenameSession(ctx, "me", v.Meta.ID, evil)
	if err != nil || meta.Title != "a]0;ownedbc d" {
		t.Errorf("renamed to %q, %v", meta.Title, err)
	}
	id := k.create(t, "\x1b[2Jcleared\x1b[0m the screen")
	if got := k.wait(t, id).Meta.Title; got != "[2Jcleared[0m the screen" {
		t.Errorf("titled from its message %q", got)
	}
}

package runner_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
)

// A fork is named after its source and the turn it was cut at, counted
// from 1, unless its caller gives a title; the source keeps its own.
func TestAForkIsNamedForWhereItWasCut(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, answer)
	ctx := context.Background()
	id := k.create(t, "Plan the trip")
	k.wait(t, id)
	converse(t, k, id, 1, func(int) string { return "and the hotel" })
	oldest := 3 // four turns, newest first: 3 is the first question
	long := strings.Repeat("word ", 40)
	if _, err := k.run.RenameSession(ctx, "me", id, "Plan the trip"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		req  runner.ForkRequest
		want string
	}{
		{"at the head", runner.ForkRequest{}, "Plan the trip (fork at turn 4)"},
		{"at the first question", runner.ForkRequest{AtTurn: &oldest}, "Plan the trip (fork at turn 1)"},
		{"with a title", runner.ForkRequest{Title: "  Hotels only\n"}, "Hotels only"},
		{"with another agent", runner.ForkRequest{Agent: "bench", AtTurn: &oldest}, "Plan the trip (fork at turn 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fork, err := k.run.ForkSession(ctx, "me", id, c.req)
			if err != nil {
				t.Fatal(err)
			}
			if fork.Meta.Title != c.want {
				t.Errorf("title %q, want %q", fork.Meta.Title, c.want)
			}
		})
	}
	t.Run("of a long title", func(t *testing.T) {
		if _, err := k.run.RenameSession(ctx, "me", id, long); err != nil {
			t.Fatal(err)
		}
		fork, err := k.run.ForkSession(ctx, "me", id, runner.ForkRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got := fork.Meta.Title; !strings.HasSuffix(got, "… (fork at turn 4)") || len([]rune(got)) > 100 {
			t.Errorf("title %q, want the source's shortened and the note kept", got)
		}
	})
	if v := k.wait(t, id); v.Meta.Title != strings.TrimSpace(long) {
		t.Errorf("the source's title became %q", v.Meta.Title)
	}
}

// A fork cut at a question holds it unanswered: Resume runs it with the
// fork's agent and the model answers it. Resume on a session that has
// its answer leaves it as it is and asks the model nothing.
func TestResumeRunsAForkThatEndsWithAQuestion(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, answer)
	ctx := context.Background()
	id := k.create(t, "first question")
	k.wait(t, id)
	at := 1 // the first question, under its answer
	fork, err := k.run.ForkSession(ctx, "me", id, runner.ForkRequest{AtTurn: &at})
	if err != nil {
		t.Fatal(err)
	}
	if fork.Meta.Status != session.StatusReady || fork.Meta.TurnCount != 1 {
		t.Fatalf("fork %s with %d turns, want ready with the question only", fork.Meta.Status, fork.Meta.TurnCount)
	}
	k.fake.Reset()
	if _, err := k.run.Resume(ctx, "me", fork.Meta.ID, nil); err != nil {
		t.Fatal(err)
	}
	v := k.wait(t, fork.Meta.ID)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 2 || v.Turns[1].LLM == nil || v.Turns[1].LLM.Text != "done" {
		t.Fatalf("after Resume the fork is %s with %d turns, want the question answered", v.Meta.Status, len(v.Turns))
	}
	if n := len(k.fake.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
	k.fake.Reset()
	if _, err := k.run.Resume(ctx, "me", fork.Meta.ID, nil); err != nil {
		t.Fatal(err)
	}
	if v := k.wait(t, fork.Meta.ID); v.Meta.Status != session.StatusReady || len(v.Turns) != 2 {
		t.Fatalf("Resume of an answered session: %s with %d turns", v.Meta.Status, len(v.Turns))
	}
	if n := len(k.fake.Requests()); n != 0 {
		t.Fatalf("Resume of an answered session asked the model %d times", n)
	}
}

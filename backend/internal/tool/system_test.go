package tool

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agents-os/agents/backend/internal/session"
)

// readHost answers ReadSession with a long session; the other operations
// are not used.
type readHost struct {
	Host
	asked int
}

func (h *readHost) ReadSession(_ context.Context, id string, last int) (session.Meta, []session.Turn, error) {
	h.asked = last
	turns := make([]session.Turn, last)
	for i := range turns {
		turns[i] = session.Turn{Index: i, Created: time.Unix(0, 0), User: &session.UserTurn{Text: strings.Repeat("x", 1000) + "\nturn end"}}
	}
	return session.Meta{ID: id, TurnCount: 500}, turns, nil
}

// callOf is a call of tl with these arguments, decoded as the runner
// decodes them.
func callOf(t *testing.T, tl Tool, arguments string, host Host) Call {
	t.Helper()
	args, err := DecodeArgs(tl.Spec(), arguments)
	if err != nil {
		t.Fatal(err)
	}
	return Call{Name: tl.Spec().Name, Args: args, Host: host}
}

// os_read_session reads a bounded tail: at most maxReadTurns turns and
// maxReadChars characters, saying what it left out.
func TestReadSessionIsBounded(t *testing.T) {
	t.Parallel()
	read, _ := System("read_session")
	host := &readHost{}
	res := read.Execute(context.Background(), callOf(t, read, `{"session_id": "s", "last_turns": 100000}`, host))
	if res.Status != session.ResultOK {
		t.Fatalf("result = %+v", res)
	}
	if host.asked != maxReadTurns {
		t.Errorf("asked for %d turns, want the cap %d", host.asked, maxReadTurns)
	}
	if len(res.Text) > maxReadChars+200 {
		t.Errorf("text is %d characters, want about %d at most", len(res.Text), maxReadChars)
	}
	if !strings.HasPrefix(res.Text, "[the beginning is cut") || !strings.HasSuffix(strings.TrimSpace(res.Text), "turn end") {
		t.Errorf("text does not say it was cut or lost its end: %q … %q", res.Text[:60], res.Text[len(res.Text)-60:])
	}
	res = read.Execute(context.Background(), callOf(t, read, `{"session_id": "s"}`, host))
	if host.asked != defaultReadTurns || !strings.HasPrefix(res.Text, "[480 earlier turns not shown]") {
		t.Errorf("default read: asked %d turns, text starts %q", host.asked, res.Text[:40])
	}
}

// longLineHost answers ReadSession with one turn whose text is a single
// line longer than what os_read_session returns.
type longLineHost struct{ Host }

func (longLineHost) ReadSession(_ context.Context, id string, _ int) (session.Meta, []session.Turn, error) {
	text := "start " + strings.Repeat("é", maxReadChars) + " the end"
	return session.Meta{ID: id, TurnCount: 1}, []session.Turn{{Created: time.Unix(0, 0), User: &session.UserTurn{Text: text}}}, nil
}

// Issue 20, item 9: when the tail os_read_session keeps is one long line,
// it returns the end of that line, marked as cut and not split inside a
// character, never nothing.
func TestReadSessionKeepsTheTailOfOneLongLine(t *testing.T) {
	t.Parallel()
	read, _ := System("read_session")
	res := read.Execute(context.Background(), callOf(t, read, `{"session_id": "s"}`, longLineHost{}))
	if res.Status != session.ResultOK {
		t.Fatalf("result = %+v", res)
	}
	if !strings.HasSuffix(strings.TrimSpace(res.Text), "é the end") {
		t.Errorf("text lost the end of the line: %q", res.Text[max(0, len(res.Text)-80):])
	}
	if !strings.HasPrefix(res.Text, "[the beginning is cut") || !strings.Contains(res.Text, "…é") {
		t.Errorf("text does not say the line was cut: %q", res.Text[:min(len(res.Text), 120)])
	}
	if !utf8.ValidString(res.Text) || len(res.Text) > maxReadChars+200 {
		t.Errorf("text is %d bytes, valid UTF-8 %v; want a bounded, whole-character tail", len(res.Text), utf8.ValidString(res.Text))
	}
}

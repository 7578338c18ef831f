package conversation

import (
	"errors"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// z asks for an instruction and compacts with it; on a session with no
// run the server answers with the compaction, which the status line
// words.
func TestCompactAsksForAnInstructionAndCompacts(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	r.keys("esc", "z")
	if r.s.compact == nil || r.s.focus != focusCompact {
		t.Fatalf("z opened no prompt (focus %d)", r.s.focus)
	}
	if v := ansi.Strip(r.s.Render(120, 20)); !strings.Contains(v, "compact, keeping: ") {
		t.Errorf("the prompt does not show:\n%s", v)
	}
	if len(r.fake.compacts) != 0 {
		t.Fatalf("compacted before enter")
	}
	r.typeText("keep the test's name")
	r.keys("enter")
	if len(r.fake.compacts) != 1 {
		t.Fatalf("Compact requests = %d, want 1", len(r.fake.compacts))
	}
	if got := r.fake.compacts[0]; got.GetSessionId() != sid || got.GetInstruction() != "keep the test's name" {
		t.Errorf("Compact(%v), want the session and the instruction", got)
	}
	if r.s.compact != nil || r.s.focus != focusView {
		t.Errorf("the prompt stayed open")
	}
	want := "compacted: 4 turns summarised · 38,204 → 2,310 tokens · $0.0012"
	if st := r.lastStatus(); st.Err != nil || st.Text != want {
		t.Errorf("status = %+v, want %q", st, want)
	}
}

// Enter with nothing written compacts all the same, with no
// instruction; esc compacts nothing.
func TestCompactInstructionIsOptionalAndEscCancels(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	r.keys("esc", "z", "esc")
	if r.s.compact != nil || len(r.fake.compacts) != 0 {
		t.Fatalf("esc: prompt %v, %d Compact requests; want neither", r.s.compact, len(r.fake.compacts))
	}
	r.keys("z", "enter")
	if len(r.fake.compacts) != 1 || r.fake.compacts[0].GetInstruction() != "" {
		t.Fatalf("Compact requests = %v, want one without an instruction", r.fake.compacts)
	}
}

// A running session compacts before its next model call: the server says
// so at once, and so does the status line. A refusal is an error there.
func TestCompactPendingAndRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.keys("esc", "z", "enter")
	if st := r.lastStatus(); st.Err != nil || st.Text != "will compact before the next step" {
		t.Errorf("status = %+v, want the compaction pending", st)
	}
	r.fake.compactErr = connect.NewError(connect.CodeFailedPrecondition, errors.New("nothing to compact"))
	r.keys("z", "enter")
	if st := r.lastStatus(); st.Err == nil || !strings.Contains(st.Err.Error(), "nothing to compact") {
		t.Errorf("status = %+v, want the server's refusal", st)
	}
}

// While the server writes a summary the header says so in place of the
// status, until the compaction turn arrives; the turn then shows as a
// marker.
func TestCompactingShowsInTheHeaderUntilTheTurnArrives(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.event(ev(11, &agentsv1.CompactionStarted{Reason: "threshold", Tokens: 38204, Threshold: 30000, ContextWindow: 32000}))
	header := func() string { return strings.SplitN(ansi.Strip(r.s.Render(100, 20)), "\n", 2)[0] }
	if h := header(); !strings.Contains(h, "compacting 38,204 tokens…") || strings.Contains(h, "running") {
		t.Errorf("header while compacting:\n%s", h)
	}
	turn := compactionTurn(4, "")
	r.event(ev(12, &agentsv1.SessionCompacted{Meta: &agentsv1.SessionMeta{Id: sid, Agent: "coder", Status: running, TurnCount: 5}, Turn: turn}))
	if h := header(); strings.Contains(h, "compacting") || !strings.Contains(h, "running") {
		t.Errorf("header after the compaction:\n%s", h)
	}
	if v := ansi.Strip(r.s.Render(100, 30)); !strings.Contains(v, "── 4 turns summarised · 38,204 → 2,310 tokens · $0.0012 · on request ──") {
		t.Errorf("no marker for the compaction:\n%s", v)
	}
	// A run that stops mid-compaction clears it too.
	r.event(ev(13, &agentsv1.CompactionStarted{Reason: "overflow", Tokens: 40000}))
	r.event(stopped(14, ready))
	if h := header(); strings.Contains(h, "compacting") {
		t.Errorf("header after the run stopped:\n%s", h)
	}
}

func TestCompactNeedsAStoredSession(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready)
	r.s = NewUnborn(r.s.c, r.s.th, r.s.km, r.drafts, "coder")
	r.open()
	r.keys("esc", "z")
	if r.s.compact != nil || len(r.fake.compacts) != 0 {
		t.Errorf("an unborn session opened the compaction prompt")
	}
}

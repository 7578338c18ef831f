package transcript

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/agents-os/agents/tui/internal/theme"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// plain is the output as a terminal without colours shows it, so golden
// files do not depend on the terminal the tests run in.
func plain(lines []string) string {
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.NoTTY}
	if _, err := w.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		panic(err)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run with -update to accept):\n%s", name, path, got)
	}
}

func toolSession() *agentsv1.Session {
	return session(ready, "done",
		userTurn(0, "List the files and read the README."),
		llmTurn(1, "Let me look.",
			toolCall("c1", "bash_ls", `{"path":"/work","all":true}`),
			toolCall("c2", "read_file", `{"path":"/work/README"}`)),
		resultsTurn(2,
			result("c1", "bash_ls", "README\nmain.go\ngo.mod", ok, 12*time.Millisecond),
			result("c2", "read_file", "open /work/README: permission denied", failed, 1500*time.Millisecond)),
		llmTurn(3, "The README cannot be read."),
	)
}

func TestGolden(t *testing.T) {
	cases := []struct {
		name  string
		width int
		build func(v *View)
	}{
		{"user_text", 60, func(v *View) {
			u := userTurn(0, "Please summarise the attached report, and keep it short: a paragraph at most, no lists.")
			u.GetUser().Attachments = []*agentsv1.Attachment{{Name: "report.pdf", MediaType: "application/pdf", Size: 48213}}
			v.Load(session(ready, "done", u, llmTurn(1, "The report says sales grew by a tenth.")))
		}},
		{"markdown_code", 60, func(v *View) {
			v.Load(session(ready, "done", userTurn(0, "How do I greet the world?"), llmTurn(1, answerMarkdown)))
		}},
		{"thinking_collapsed", 60, func(v *View) {
			l := llmTurn(1, "Four.")
			l.GetLlm().Thinking = "The user asks for two plus two.\nThat is four, a small sum."
			v.Load(session(ready, "done", userTurn(0, "2+2?"), l))
		}},
		{"thinking_expanded", 60, func(v *View) {
			l := llmTurn(1, "Four.")
			l.GetLlm().Thinking = "The user asks for two plus two.\nThat is four, a small sum."
			v.Load(session(ready, "done", userTurn(0, "2+2?"), l))
			v.Toggle(1)
		}},
		{"tools_collapsed", 60, func(v *View) { v.Load(toolSession()) }},
		{"tools_expanded", 60, func(v *View) {
			v.Load(toolSession())
			v.Toggle(1)
		}},
		{"helper", 70, func(v *View) {
			res := result("h1", "prompt_agent_writer", "A poem about the sea.", ok, 3400*time.Millisecond)
			res.ChildSessionId = childID
			v.Load(session(ready, "done",
				userTurn(0, "Ask the writer for a poem."),
				llmTurn(1, "", helperCall("h1", "writer", "Write a short poem about the sea")),
				resultsTurn(2, res),
				llmTurn(3, "The writer wrote a poem about the sea."),
			))
		}},
		{"helper_running", 70, func(v *View) {
			v.Load(session(running, "",
				userTurn(0, "Ask the writer for a poem."),
				llmTurn(1, "", helperCall("h1", "writer", "Write a short poem about the sea")),
			))
			v.Apply(event(&agentsv1.ToolStarted{Call: helperCall("h1", "writer", "Write a short poem about the sea")}))
			v.Apply(event(&agentsv1.SubcallStarted{ChildSessionId: childID, Agent: "writer", CallId: "h1", Depth: 1}))
			v.Apply(event(&agentsv1.ToolProgressed{CallId: "h1", Message: "writer: drafting the second stanza"}))
		}},
		{"mail", 60, func(v *View) {
			u := &agentsv1.Turn{Index: 2, Kind: &agentsv1.Turn_User{User: &agentsv1.UserTurn{Mail: []*agentsv1.MailEnvelope{
				{
					Sender: &agentsv1.MailSender{Kind: &agentsv1.MailSender_SessionId{SessionId: childID}},
					Body:   &agentsv1.MailBody{Kind: &agentsv1.MailBody_AgentMessage{AgentMessage: &agentsv1.AgentMessage{Agent: "reviewer", Text: "The patch looks good to me."}}},
				},
				{
					Sender: &agentsv1.MailSender{Kind: &agentsv1.MailSender_User{User: "alice"}},
					Body:   &agentsv1.MailBody{Kind: &agentsv1.MailBody_UserMessage{UserMessage: &agentsv1.UserMessage{Text: "Also update the changelog."}}},
				},
				{
					Sender:   &agentsv1.MailSender{Kind: &agentsv1.MailSender_System{System: "watch"}},
					Priority: agentsv1.MailPriority_MAIL_PRIORITY_URGENT,
					Body: &agentsv1.MailBody{Kind: &agentsv1.MailBody_Control{Control: &agentsv1.ControlMessage{
						Kind: &agentsv1.ControlMessage_CancelCalls{CancelCalls: &agentsv1.CancelCalls{Reason: "took too long"}},
					}}},
				},
			}}}}
			v.Load(session(ready, "done", userTurn(0, "Fix the bug."), llmTurn(1, "Fixed."), u, llmTurn(3, "Changelog updated.")))
		}},
		{"streaming", 60, func(v *View) {
			s := session(running, "", userTurn(0, "How do I greet the world?"))
			v.Load(s)
			v.Apply(event(&agentsv1.ThinkingDelta{Text: "They want a hello world.", TurnIndex: 1}))
			for _, d := range deltas(answerMarkdown[:len(answerMarkdown)-50], 9) {
				v.Apply(event(&agentsv1.TextDelta{Text: d, TurnIndex: 1}))
			}
		}},
		{"in_progress_loaded", 60, func(v *View) {
			s := session(running, "", userTurn(0, "How do I greet the world?"))
			s.InProgress = &agentsv1.TurnInProgress{TurnIndex: 1, Text: "Here is the plan:\n\n## Ste", Thinking: "A hello world."}
			v.Load(s)
		}},
		{"tool_round_loaded", 60, func(v *View) {
			s := session(running, "",
				userTurn(0, "List the files and read the README."),
				llmTurn(1, "Let me look.",
					toolCall("c1", "bash_ls", `{"path":"/work"}`),
					toolCall("c2", "read_file", `{"path":"/work/README"}`)))
			s.InProgress = &agentsv1.TurnInProgress{TurnIndex: 2, ToolResults: []*agentsv1.ToolResult{
				result("c1", "bash_ls", "README", ok, 12*time.Millisecond),
			}}
			v.Load(s)
		}},
		{"interrupted", 60, func(v *View) {
			l := llmTurn(1, "I was about to explain the")
			l.GetLlm().Interrupted = true
			v.Load(session(ready, "done", userTurn(0, "Explain monads."), l, userTurn(2, "Never mind, explain functors.")))
		}},
		{"failure", 60, func(v *View) {
			v.Load(session(running, "", userTurn(0, "Hello?")))
			v.Apply(event(&agentsv1.SessionFailed{Reason: "model endpoint: 503 Service Unavailable", Code: "model_error"}))
		}},
		{"deferred", 60, func(v *View) {
			s := session(agentsv1.SessionStatus_SESSION_STATUS_WAITING, "waiting",
				userTurn(0, "Delete the temp files."),
				llmTurn(1, "", toolCall("d1", "bash_rm", `{"path":"/tmp/x"}`)))
			s.PendingCalls = []*agentsv1.DeferredCall{{Token: "tok", SessionId: parentID, Call: toolCall("d1", "bash_rm", `{"path":"/tmp/x"}`), Reason: "approval"}}
			v.Load(s)
		}},
		{"selected", 60, func(v *View) {
			v.Load(toolSession())
			v.Select(1)
		}},
		{"usage", 60, func(v *View) {
			l := llmTurn(1, "Done.")
			l.GetLlm().Usage = &agentsv1.Usage{PromptTokens: 12345, CompletionTokens: 678, CachedTokens: 10000, ReasoningTokens: 120}
			v.Load(session(ready, "max_steps", userTurn(0, "Go."), l))
		}},
		{"compaction", 120, func(v *View) {
			v.Load(session(ready, "done", userTurn(0, "Go."), llmTurn(1, "Done."), compactionTurn(2, "manual", "keep the API names"), userTurn(3, "And now?")))
		}},
		{"compaction_expanded", 100, func(v *View) {
			v.Load(session(ready, "done", userTurn(0, "Go."), llmTurn(1, "Done."), compactionTurn(2, "manual", "keep the API names"), userTurn(3, "And now?")))
			v.Toggle(2)
		}},
		{"compaction_pruned", 70, func(v *View) {
			c := &agentsv1.Compaction{Reason: "overflow", PruneEnd: 2, PrunedResults: 12, TokensBefore: 131072, TokensAfter: 90211}
			v.Load(session(ready, "done", userTurn(0, "Go."), llmTurn(1, "Done."), &agentsv1.Turn{Index: 2, Kind: &agentsv1.Turn_Compaction{Compaction: c}}))
			v.Toggle(2)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v := newView()
			c.build(v)
			lines := v.Lines(c.width)
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > c.width {
					t.Errorf("line %d is %d wide, more than %d: %q", i, w, c.width, ansi.Strip(l))
				}
			}
			golden(t, c.name, plain(lines))
		})
	}
}

// A streamed answer ends as the stored turn: once head_turn arrives, the
// transcript is the one a fresh Load of the stored session draws.
func TestDeltasThenHeadTurnMatchLoad(t *testing.T) {
	t.Parallel()
	answer := longAnswer(12)
	stored := llmTurn(1, answer)
	stored.GetLlm().Thinking = "Think first, then write."

	streamed := newView()
	streamed.Load(session(running, "", userTurn(0, "Write a long answer.")))
	for _, d := range deltas("Think first, then write.", 5) {
		streamed.Apply(event(&agentsv1.ThinkingDelta{Text: d, TurnIndex: 1}))
	}
	for _, d := range deltas(answer, 7) {
		if !streamed.Apply(event(&agentsv1.TextDelta{Text: d, TurnIndex: 1})) {
			t.Fatal("a text delta did not change the output")
		}
		streamed.Lines(70)
	}
	streamed.Apply(headTurn(stored, running))
	streamed.Apply(event(&agentsv1.RunStopped{Status: ready, Reason: "done", Steps: 1}))

	loaded := newView()
	loaded.Load(session(ready, "done", userTurn(0, "Write a long answer."), stored))

	if got, want := plain(streamed.Lines(70)), plain(loaded.Lines(70)); got != want {
		t.Errorf("streamed then stored:\n%s\nloaded:\n%s", got, want)
	}
	if !slices.Equal(streamed.Lines(70), loaded.Lines(70)) {
		t.Error("same text, different escape sequences")
	}
}

// A tool call the model is writing shows as it grows: folded from its
// deltas, the turn in progress is the one a Load mid-call draws, and
// once stored the call is drawn from the stored turn.
func TestACallBeingWrittenMatchesALoadMidCall(t *testing.T) {
	t.Parallel()
	const args = `{"path":"main.go","line":12}`
	streamed := newView()
	streamed.Load(session(running, "", userTurn(0, "Read it.")))
	streamed.Apply(event(&agentsv1.TextDelta{Text: "Reading.", TurnIndex: 1}))
	if !streamed.Apply(event(&agentsv1.ToolCallDelta{TurnIndex: 1, CallIndex: 0, CallId: "c1", Name: "bash_read"})) {
		t.Fatal("a call begun did not change the output")
	}
	for _, d := range deltas(args, 5) {
		if !streamed.Apply(event(&agentsv1.ToolCallDelta{TurnIndex: 1, CallIndex: 0, Arguments: d})) {
			t.Fatal("a piece of the arguments did not change the output")
		}
		streamed.Lines(70)
	}
	mid := session(running, "", userTurn(0, "Read it."))
	mid.InProgress = &agentsv1.TurnInProgress{TurnIndex: 1, Text: "Reading.", ToolCalls: []*agentsv1.ToolCall{{Id: "c1", Name: "bash_read", Arguments: args}}}
	loaded := newView()
	loaded.Load(mid)
	for _, expanded := range []bool{false, true} {
		if expanded {
			streamed.Toggle(1)
			loaded.Toggle(1)
		}
		if got, want := plain(streamed.Lines(70)), plain(loaded.Lines(70)); got != want {
			t.Errorf("expanded %v, streamed:\n%s\nloaded mid-call:\n%s", expanded, got, want)
		}
	}
	if !strings.Contains(plain(streamed.Lines(70)), "main.go") {
		t.Errorf("the call's arguments do not show:\n%s", plain(streamed.Lines(70)))
	}

	stored := llmTurn(1, "Reading.", toolCall("c1", "bash_read", args))
	streamed.Apply(headTurn(stored, running))
	again := newView()
	again.Load(session(running, "", userTurn(0, "Read it."), stored))
	again.Toggle(1)
	if got, want := plain(streamed.Lines(70)), plain(again.Lines(70)); got != want {
		t.Errorf("streamed then stored:\n%s\nloaded:\n%s", got, want)
	}
}

// Rendering block by block, with the stable blocks kept, gives at every
// step of a stream what rendering that text from scratch gives.
func TestStreamMatchesFullRender(t *testing.T) {
	t.Parallel()
	texts := map[string]string{
		"long":       longAnswer(16),
		"markdown":   answerMarkdown,
		"loose list": "1. one\n\n2. two\n\n   continued\n\n3. three\n\nafter\n",
		"setext":     "Title\n\nparagraph\n=====\n\nnext\n",
		"html":       "text\n\n<div>\n\nstill html\n\n</div>\n\nafter\n",
		"tilde":      "~~~\ncode\n\n```\nstill code\n~~~\n\nafter\n",
		"quote":      "> quoted\n\n> more\n\nplain\n",
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newMarkdown(theme.New(true).Transcript.Markdown)
			var s stream
			for end := 1; end <= len(text); end += 3 {
				got := s.render(m, text[:end], 50)
				if want := m.render(text[:end], 50); !slices.Equal(got, want) {
					t.Fatalf("at %d:\nstreamed:\n%s\nfull:\n%s", end, plain(got), plain(want))
				}
			}
		})
	}
}

func TestBlockEnds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want []int
	}{
		{"a\n\nb\n", []int{3}},
		{"a\n\nb", nil}, // the line after the blank is not complete
		{"```\na\n\nb\n```\n\nc\n", []int{14}},
		{"- a\n\nb\n", nil},                // the list may go on
		{"a\n\n    code\n", nil},           // indented code, or a continuation
		{"a\n\n---\n", nil},                // a setext underline
		{"[x]: http://x\n\na\n\nb\n", nil}, // a reference reaches anything
		{"a\n\nb\n\n<p>\n\nc\n\nd\n", []int{3, 6}},
	}
	for _, c := range cases {
		if got := blockEnds(c.text, 0); !slices.Equal(got, c.want) {
			t.Errorf("blockEnds(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestWidthChangeRendersAgain(t *testing.T) {
	t.Parallel()
	v := newView()
	v.Load(session(ready, "done", userTurn(0, "How do I greet the world?"), llmTurn(1, answerMarkdown)))
	wide := slices.Clone(v.Lines(80))
	narrow := v.Lines(36)
	if slices.Equal(wide, narrow) {
		t.Fatal("the same lines at 80 and 36 columns")
	}
	for _, l := range narrow {
		if ansi.StringWidth(l) > 36 {
			t.Fatalf("a line wider than 36 columns after resizing: %q", ansi.Strip(l))
		}
	}
	if again := v.Lines(80); !slices.Equal(again, wide) {
		t.Errorf("back at 80 columns:\n%s\nfirst:\n%s", plain(again), plain(wide))
	}
}

func TestCachedTurnsAreNotRenderedAgain(t *testing.T) {
	t.Parallel()
	v := newView()
	v.Load(toolSession())
	first := v.Lines(60)
	if again := v.Lines(60); &again[0] != &first[0] {
		t.Error("Lines with nothing changed assembled the output again")
	}
	before := v.turns[0].content
	v.Apply(headTurn(userTurn(4, "One more question."), running))
	v.Lines(60)
	if &v.turns[0].content[0] != &before[0] {
		t.Error("a new turn rendered an old one again")
	}
	v.Select(0)
	v.Lines(60)
	if &v.turns[0].content[0] != &before[0] {
		t.Error("selecting a turn rendered its content again")
	}
	// A result arriving for a call redraws the turn that asked for it.
	llm := v.turns[1].content
	v.Apply(event(&agentsv1.ToolProgressed{CallId: "c1", Message: "late"}))
	v.Lines(60)
	if &v.turns[1].content[0] == &llm[0] {
		t.Error("a call's change did not redraw its turn")
	}
}

// A theme chosen after the lines were drawn (the terminal answering its
// background query late) draws every turn, the streamed one too, as a
// transcript drawn with that theme from the start.
func TestRestyleDrawsEveryTurnAgain(t *testing.T) {
	t.Parallel()
	draw := func(v *View) []string {
		s := toolSession()
		s.Meta.Status = running
		v.Load(s)
		v.Select(1)
		for _, d := range deltas(answerMarkdown, 5) {
			v.Apply(event(&agentsv1.TextDelta{Text: d, TurnIndex: 4}))
			v.Lines(60)
		}
		return v.Lines(60)
	}
	v := newView()
	dark := slices.Clone(draw(v))
	v.Restyle(theme.New(false).Transcript)
	got := v.Lines(60)
	want := draw(New(theme.New(false).Transcript))
	if slices.Equal(got, dark) {
		t.Fatal("restyled, the lines are those of the dark theme")
	}
	if !slices.Equal(got, want) {
		t.Errorf("restyled:\n%q\ndrawn light from the start:\n%q", got, want)
	}
}

func TestNavigation(t *testing.T) {
	t.Parallel()
	v := newView()
	s := toolSession()
	s.Turns, s.FirstTurnIndex = s.Turns[2:], 2
	s.Meta.TurnCount = 4
	v.Load(s)
	lines := v.Lines(60)
	if v.FirstIndex() != 2 || v.Count() != 4 {
		t.Fatalf("FirstIndex, Count = %d, %d; want 2, 4", v.FirstIndex(), v.Count())
	}
	if v.TurnStart(1) != -1 {
		t.Error("a turn not loaded has a start line")
	}
	for _, index := range []int{2, 3} {
		start := v.TurnStart(index)
		if start < 0 || start >= len(lines) || v.TurnAt(start) != index {
			t.Errorf("turn %d starts at %d, and TurnAt there is %d", index, start, v.TurnAt(start))
		}
	}
	older := toolSession().Turns[:2]
	v.Prepend(older)
	if v.FirstIndex() != 0 || v.Count() != 4 {
		t.Fatalf("after Prepend: FirstIndex, Count = %d, %d; want 0, 4", v.FirstIndex(), v.Count())
	}
	// The older page's calls meet the results already loaded.
	loaded := newView()
	loaded.Load(toolSession())
	if got, want := plain(v.Lines(60)), plain(loaded.Lines(60)); got != want {
		t.Errorf("prepended:\n%s\nloaded whole:\n%s", got, want)
	}
	last := len(v.Lines(60)) - 1
	if v.TurnAt(last) != 3 || v.TurnAt(0) != 0 {
		t.Errorf("TurnAt(0), TurnAt(last) = %d, %d; want 0, 3", v.TurnAt(0), v.TurnAt(last))
	}
	v.Select(3)
	if v.Selected() != 3 {
		t.Errorf("Selected() = %d after Select(3)", v.Selected())
	}
}

func TestChildren(t *testing.T) {
	t.Parallel()
	v := newView()
	v.Load(session(running, "",
		userTurn(0, "Ask two helpers."),
		llmTurn(1, "", helperCall("h1", "writer", "poem"), helperCall("h2", "critic", "review"), toolCall("b", "bash_ls", "{}"))))
	if got := v.Children(1); len(got) != 0 {
		t.Errorf("children before any started: %v", got)
	}
	v.Apply(event(&agentsv1.SubcallStarted{ChildSessionId: "child-1", Agent: "writer", CallId: "h1"}))
	v.Apply(event(&agentsv1.SubcallStarted{ChildSessionId: "child-2", Agent: "critic", CallId: "h2"}))
	if got := v.Children(1); !slices.Equal(got, []string{"child-1", "child-2"}) {
		t.Errorf("Children(1) = %v", got)
	}
	r1 := result("h1", "prompt_agent_writer", "poem", ok, time.Second)
	r1.ChildSessionId = "child-1"
	v.Apply(headTurn(resultsTurn(2, r1), running))
	if got := v.Children(2); !slices.Equal(got, []string{"child-1"}) {
		t.Errorf("Children(2) = %v", got)
	}
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	v := newView()
	v.Load(toolSession())
	golden(t, "markdown_export", v.Markdown(0)+"---\n"+v.Markdown(1)+"---\n"+v.Markdown(2))
	if v.Markdown(9) != "" {
		t.Error("a turn not loaded has markdown")
	}
}

func TestApplyIgnoresOtherEvents(t *testing.T) {
	t.Parallel()
	v := newView()
	v.Load(toolSession())
	ev := &agentsv1.Event{Kind: "mail.accepted", Body: &agentsv1.Event_MailAccepted{MailAccepted: &agentsv1.MailAccepted{}}}
	if v.Apply(ev) {
		t.Error("mail.accepted changed the transcript")
	}
	same := &agentsv1.SessionUpdated{Meta: &agentsv1.SessionMeta{Agent: "coder", Status: ready, StatusReason: "done", TurnCount: 4}}
	if v.Apply(event(same)) {
		t.Error("a session.updated that changes nothing shown changed the transcript")
	}
}

// Turns rendered by several workers are the turns one renders.
func TestWorkersRenderAsOne(t *testing.T) {
	t.Parallel()
	s := benchSession(120)
	one, many := newView(), newView()
	one.workers, many.workers = 1, 4
	one.Load(s)
	many.Load(s)
	if !slices.Equal(one.Lines(72), many.Lines(72)) {
		t.Error("four workers drew another transcript than one")
	}
}

func TestReloadKeepsUnchangedTurns(t *testing.T) {
	t.Parallel()
	v := newView()
	v.Load(toolSession())
	v.Lines(60)
	user, calls := v.turns[0].content, v.turns[1].content
	v.Load(toolSession())
	v.Lines(60)
	if &v.turns[0].content[0] != &user[0] {
		t.Error("reloading the same session rendered an unchanged turn again")
	}
	if &v.turns[1].content[0] == &calls[0] {
		t.Error("reloading kept the lines of a turn with calls, whose results may have changed")
	}
	changed := toolSession()
	changed.Turns[3] = llmTurn(3, "Another answer.")
	v.Load(changed)
	if !strings.Contains(plain(v.Lines(60)), "Another answer.") {
		t.Error("reloading kept the lines of a changed turn")
	}
}

// Code is not wrapped by glamour; its long lines are cut to the width.
func TestLongCodeLinesAreCut(t *testing.T) {
	t.Parallel()
	v := newView()
	v.Load(session(ready, "done", llmTurn(0, "```\n"+strings.Repeat("x", 200)+"\n```\n")))
	for _, l := range v.Lines(40) {
		if ansi.StringWidth(l) > 40 {
			t.Fatalf("a line %d wide at 40 columns", ansi.StringWidth(l))
		}
	}
}

func TestLateDeltaOfStoredTurnIsIgnored(t *testing.T) {
	t.Parallel()
	v := newView()
	v.Load(session(ready, "done", userTurn(0, "Hi."), llmTurn(1, "Hello.")))
	before := plain(v.Lines(60))
	if v.Apply(event(&agentsv1.TextDelta{Text: "Hello.", TurnIndex: 1})) {
		t.Error("a delta of a stored turn changed the transcript")
	}
	if after := plain(v.Lines(60)); after != before {
		t.Errorf("after a late delta:\n%s", after)
	}
}

// A compaction turn arrives with session.compacted and again with
// session.updated: once in its place, drawn as a fresh Load draws it,
// and copied as markdown with its summary and instruction.
func TestCompactionEventsMatchLoad(t *testing.T) {
	t.Parallel()
	turn := compactionTurn(2, "threshold", "")
	live := newView()
	live.Load(session(running, "", userTurn(0, "Go."), llmTurn(1, "Done.")))
	meta := &agentsv1.SessionMeta{Id: parentID, Agent: "coder", Status: running, TurnCount: 3}
	if !live.Apply(event(&agentsv1.SessionCompacted{Meta: meta, Turn: turn})) {
		t.Fatal("session.compacted did not change the output")
	}
	live.Apply(event(&agentsv1.SessionUpdated{Meta: meta, HeadTurn: turn}))
	loaded := newView()
	loaded.Load(session(running, "", userTurn(0, "Go."), llmTurn(1, "Done."), turn))
	if got, want := plain(live.Lines(70)), plain(loaded.Lines(70)); got != want {
		t.Errorf("followed live:\n%s\nloaded:\n%s", got, want)
	}
	if live.Count() != 3 {
		t.Errorf("count = %d, want 3", live.Count())
	}
	md := loaded.Markdown(2)
	for _, want := range []string{"_Context compacted: 2 turns summarised · 1 tool result shortened · 38,204 → 2,310 tokens · $0.0012_", "The user asked"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown %q lacks %q", md, want)
		}
	}
}

// Opening the marker draws that turn again, and only it.
func TestCompactionToggleRendersOnlyItsTurn(t *testing.T) {
	t.Parallel()
	v := newView()
	v.Load(session(ready, "done", userTurn(0, "Go."), llmTurn(1, "Done."), compactionTurn(2, "manual", "")))
	v.Lines(70)
	kept := v.turns[1].content
	before := len(v.Lines(70))
	v.Toggle(2)
	if after := len(v.Lines(70)); after <= before {
		t.Errorf("opening the marker added no lines (%d, then %d)", before, after)
	}
	if &v.turns[1].content[0] != &kept[0] {
		t.Error("another turn was drawn again")
	}
}

// A failure's reason too long for one line goes on under itself: the
// mark is not repeated, which would read as a second failure.
func TestALongFailureWrapsUnderItsMark(t *testing.T) {
	t.Parallel()
	v := newView()
	v.Load(session(running, "", userTurn(0, "Hello?")))
	v.Apply(event(&agentsv1.SessionFailed{Reason: `llm: send request: Post "http://127.0.0.1:7499/v1/chat/completions": dial tcp 127.0.0.1:7499: connect: connection refused`, Code: "model_error"}))
	out := plain(v.Lines(60))
	if n := strings.Count(out, "✗ failed"); n != 1 {
		t.Errorf("%d failure marks, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "refused") {
		t.Errorf("the reason is cut:\n%s", out)
	}
}

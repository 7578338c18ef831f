//go:build unix

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// The terminal UI's test agents (testdata/tui) and what their model says.
const (
	chatPrompt    = "chat agent of the tui test"
	tellerPrompt  = "teller agent of the tui test"
	tuiAskPrompt  = "asker agent of the tui test"
	tuiBossPrompt = "boss agent of the tui test"
	tuiAidePrompt = "aide agent of the tui test"
	guardPrompt   = "guard agent of the tui test"
)

var tuiAgents = []string{"chat", "teller", "asker", "boss", "guard"}

func tuiAgentFiles() []string {
	files := make([]string, len(tuiAgents))
	for i, name := range tuiAgents {
		files[i] = filepath.Join("testdata/tui", name+".json")
	}
	return files
}

// quotedPrompt is a helper call's arguments as a model's JSON encoder
// writes them, > escaped.
const quotedPrompt = `{"prompt":"\u003e\u003e What time is it? asked the white rabbit, looking at his watch once more"}`

// tellerStory streams for about ten seconds: long enough to type a draft,
// pause or interrupt while it runs.
var tellerStory = strings.Repeat("and then ", 100)

func tuiRules() fakellm.Rules {
	return fakellm.Rules{
		Rules: []fakellm.Rule{
			{Name: "chat", Match: fakellm.Match{SystemContains: chatPrompt}, Reply: fakellm.Reply{
				Text: "hello from chat: {{last_user}}", ChunkSize: 4, ChunkDelay: "20ms",
			}},
			{Name: "story", Match: fakellm.Match{SystemContains: tellerPrompt, UserContains: "story"}, Reply: fakellm.Reply{
				Text: "once upon a time " + tellerStory + "the end", ChunkSize: 9, ChunkDelay: "100ms",
			}},
			{Name: "teller", Match: fakellm.Match{SystemContains: tellerPrompt}, Reply: fakellm.Reply{
				Text: "teller read: {{last_user}}",
			}},
			{Name: "ask", Match: fakellm.Match{SystemContains: tuiAskPrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{Name: "ask_user", Arguments: json.RawMessage(`{"question": "which colour?"}`)}},
			}},
			{Name: "thank", Match: fakellm.Match{SystemContains: tuiAskPrompt, LastIsToolResult: new(true)}, Reply: fakellm.Reply{
				Text: "you chose {{last_tool_result}}",
			}},
			// Asked to go slowly, the boss takes two steps, the first one
			// streaming for a few seconds: time to pause between them.
			{Name: "slow weather", Match: fakellm.Match{SystemContains: tuiBossPrompt, UserContains: "slowly", AssistantMessages: new(0)}, Reply: fakellm.Reply{
				Text: "first, the weather " + strings.Repeat(". ", 20), ChunkSize: 2, ChunkDelay: "100ms",
				ToolCalls: []fakellm.ToolCall{{Name: "bash_weather", Arguments: json.RawMessage(`{}`)}},
			}},
			{Name: "slow report", Match: fakellm.Match{SystemContains: tuiBossPrompt, UserContains: "slowly", AssistantMessages: new(1)}, Reply: fakellm.Reply{
				Text: "walked: {{last_tool_result}}",
			}},
			// Asked to quote, the boss writes its helper call slowly, its
			// arguments escaped as a JSON encoder escapes > (\u003e): the
			// call streams for a few seconds.
			{Name: "quote", Match: fakellm.Match{SystemContains: tuiBossPrompt, UserContains: "quote", AssistantMessages: new(0)}, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_aide", RawArguments: quotedPrompt}}, ChunkSize: 3, ChunkDelay: "120ms",
			}},
			{Name: "weather", Match: fakellm.Match{SystemContains: tuiBossPrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{Name: "bash_weather", Arguments: json.RawMessage(`{}`)}},
			}},
			{Name: "delegate", Match: fakellm.Match{SystemContains: tuiBossPrompt, AssistantMessages: new(1)}, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_aide", Arguments: json.RawMessage(`{"prompt": "which colour is the sea?"}`)}},
			}},
			{Name: "report", Match: fakellm.Match{SystemContains: tuiBossPrompt, AssistantMessages: new(2)}, Reply: fakellm.Reply{
				Text: "boss heard: {{last_tool_result}}",
			}},
			{Name: "guard looks", Match: fakellm.Match{SystemContains: guardPrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{Name: "bash_weather", Arguments: json.RawMessage(`{}`)}},
			}},
			{Name: "guard reports", Match: fakellm.Match{SystemContains: guardPrompt, LastIsToolResult: new(true)}, Reply: fakellm.Reply{
				Text: "guard saw: {{last_tool_result}}",
			}},
			{Name: "aide", Match: fakellm.Match{SystemContains: tuiAidePrompt}, Reply: fakellm.Reply{
				Text: "aide says: the sea is teal",
			}},
		},
		Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
	}
}

// tuiEnv is the environment of a TUI under test: a home of its own, no
// API keys, the terminal's basics.
func tuiEnv(dir string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "EDITOR=true"}
	return append(env,
		"HOME="+filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
	)
}

// tuiFixture is a model server and a directory for a TUI test.
type tuiFixture struct {
	bin, dir, model string
}

func newTUIFixture(t *testing.T) *tuiFixture {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the agents binary and runs it in tmux")
	}
	return &tuiFixture{bin: buildAgents(t), dir: t.TempDir(), model: fakellmtest.Start(t, tuiRules()).URL()}
}

// embedded runs `agents tui` with its own server in the process.
func (f *tuiFixture) embedded(t *testing.T, extra ...string) *tmuxTerm {
	t.Helper()
	return f.embeddedSized(t, tmuxCols, tmuxRows, extra...)
}

// embeddedSized is embedded in a terminal of cols×rows cells.
func (f *tuiFixture) embeddedSized(t *testing.T, cols, rows int, extra ...string) *tmuxTerm {
	t.Helper()
	args := []string{f.bin, "tui", "--db", filepath.Join(f.dir, "agents.db"), "--offline-model", f.model,
		"--log-file", filepath.Join(f.dir, "tui.log")}
	for _, file := range tuiAgentFiles() {
		abs, _ := filepath.Abs(file)
		args = append(args, "--agent-file", abs)
	}
	return startTmuxSized(t, cols, rows, f.dir, tuiEnv(f.dir), append(args, extra...)...)
}

// attached runs `agents tui --attach url`.
func (f *tuiFixture) attached(t *testing.T, url string, extra ...string) *tmuxTerm {
	t.Helper()
	args := []string{f.bin, "tui", "--attach", url, "--log-file", filepath.Join(t.TempDir(), "tui.log")}
	return startTmux(t, f.dir, tuiEnv(f.dir), append(args, extra...)...)
}

// serve runs a separate `agents serve` with the TUI's agents.
func (f *tuiFixture) serve(t *testing.T, port string) *serveProc {
	t.Helper()
	return startServeAgents(t, f.bin, f.dir, filepath.Join(f.dir, "served.db"), f.model, tuiAgentFiles(), port)
}

func TestTUIAttachToADeadAddressFailsFast(t *testing.T) {
	f := newTUIFixture(t)
	term := f.attached(t, "http://127.0.0.1:1")
	if code := term.exitStatus(); code == 0 {
		t.Fatalf("exit status 0, want an error:\n%s", term.capture())
	}
	if out := term.captureAll(); !strings.Contains(out, "http://127.0.0.1:1: unreachable") {
		t.Fatalf("the error does not name the address:\n%s", out)
	}
}

// newChat starts a session of agent from the new-session picker and
// waits for its empty conversation.
func newChat(term *tmuxTerm, agent string) {
	term.t.Helper()
	term.waitFor("connected")
	term.keys("C-n")
	term.waitFor("New session with which agent?")
	term.typeText(agent)
	term.waitFor("New session with which agent? " + agent)
	term.keys("Enter")
	term.waitFor("Write a message")
}

// startChat runs an embedded TUI serving only agent (and its helpers)
// and opens a new session of it.
func startChat(t *testing.T, agent string) *tmuxTerm {
	t.Helper()
	term := newTUIFixture(t).embedded(t, "-a", agent)
	newChat(term, agent)
	return term
}

// say types a message into the focused composer and sends it.
func say(term *tmuxTerm, text string) {
	term.t.Helper()
	term.typeText(text)
	term.keys("Enter")
}

func TestTUISendsAMessageAndShowsTheAnswerStreaming(t *testing.T) {
	t.Parallel()
	term := startChat(t, "chat")
	say(term, "hi there")
	term.waitFor("you")
	// The answer streams in pieces: a part of it shows before all of it.
	term.waitMatch(regexp.MustCompile(`hello from|● running`), "the answer streaming")
	term.waitFor("hello from chat: hi there")
	term.waitFor("○ ready")
}

func TestTUIShowsAToolCallAndOpensTheHelpersSession(t *testing.T) {
	t.Parallel()
	term := startChat(t, "boss")
	say(term, "what is the weather, and the sea?")
	screen := term.waitFor("boss heard: aide says: the sea is teal")
	for _, want := range []string{"bash_weather", "helper aide"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the conversation does not show %q:\n%s", want, screen)
		}
	}
	// The helper's session is a session of its own, nested under its
	// parent in the list, and opens from the call.
	term.keys("Escape")
	term.keys("o")
	term.waitFor("helper session of")
	term.waitFor("which colour is the sea?")
	// Opened so, its transcript has the keys: Escape leaves it, and the
	// parent's after it.
	term.keys("Escape")
	term.waitGone("helper session of")
	term.keys("Escape")
	term.waitMatch(regexp.MustCompile(`└ .*aide`), "the helper's session nested under its parent")
}

func TestTUIDraftTypedWhileBusyIsPostedWhenTheRunStops(t *testing.T) {
	t.Parallel()
	term := startChat(t, "teller")
	say(term, "tell me a story")
	term.waitFor("once upon a time")
	term.waitFor("Busy")
	say(term, "and make it short")
	term.waitFor("draft")
	// Not sent yet: the story goes on to its end first.
	if strings.Contains(term.capture(), "teller read:") {
		t.Fatalf("the draft was sent while the run was busy:\n%s", term.capture())
	}
	term.waitFor("the end")
	term.waitFor("teller read: and make it short")
}

func TestTUIPausesAndResumesARun(t *testing.T) {
	t.Parallel()
	term := startChat(t, "boss")
	say(term, "go slowly")
	term.waitFor("first, the weather")
	term.keys("C-p")
	// Pause takes effect at the next step: after the tool, before the
	// answer.
	term.waitFor("❚❚ paused")
	if strings.Contains(term.capture(), "walked:") {
		t.Fatalf("the run went on past the pause:\n%s", term.capture())
	}
	term.keys("C-p")
	term.waitFor("walked: sunny and 21C")
	term.waitFor("○ ready")
}

func TestTUIInterruptsARunWithAMessage(t *testing.T) {
	t.Parallel()
	term := startChat(t, "teller")
	say(term, "tell me a story")
	term.waitFor("once upon a time")
	term.typeText("stop, please")
	term.keys("C-g")
	// The story stops where it was; the message reaches the model as
	// urgent mail.
	term.waitMatch(regexp.MustCompile(`(?s)! interrupted.*teller read: .*stop, please`), "the interrupted story and the answer to the message")
	if strings.Contains(term.capture(), "the end") {
		t.Fatalf("the story ran to its end despite the interrupt:\n%s", term.capture())
	}
}

func TestTUIForksAConversation(t *testing.T) {
	t.Parallel()
	term := startChat(t, "chat")
	say(term, "first question")
	term.waitFor("hello from chat: first question")
	term.keys("Escape")
	term.keys("[")
	term.keys("C-f")
	term.waitFor("forked from")
	term.waitFor("Write a message")
	say(term, "second question")
	term.waitFor("hello from chat: second question")
	term.keys("Escape", "Escape")
	term.waitMatch(regexp.MustCompile(`(?s)first question.*first question`), "both sessions in the list")
}

func TestTUIAnswersAPendingCall(t *testing.T) {
	t.Parallel()
	term := startChat(t, "asker")
	say(term, "ask me something")
	term.waitFor("pending calls (1)")
	term.waitFor("which colour?")
	term.keys("C-l")
	term.typeText("blue")
	term.keys("Enter")
	term.waitFor("you chose blue")
	term.waitGone("pending calls")
}

// postJSON sends body to the server's JSON route path, as curl would.
func postJSON(t *testing.T, url, path, body string) {
	t.Helper()
	res, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		out, _ := io.ReadAll(res.Body)
		t.Fatalf("POST %s: %s\n%s", path, res.Status, out)
	}
}

func TestTUIAttachedSeesOtherClientsLive(t *testing.T) {
	t.Parallel()
	f := newTUIFixture(t)
	srv := f.serve(t, "")
	one := f.attached(t, srv.url)
	two := f.attached(t, srv.url)
	one.waitFor("● connected · " + srv.url)
	two.waitFor("● connected · " + srv.url)

	// A session made with curl shows in both lists as it is created.
	postJSON(t, srv.url, "/v1/sessions", `{"agent": "chat", "message": {"text": "made with curl"}}`)
	one.waitFor("made with curl")
	two.waitFor("made with curl")

	// Both open it; what one says, the other sees, answer included.
	one.keys("Enter")
	two.keys("Enter")
	one.waitFor("hello from chat: made with curl")
	two.waitFor("hello from chat: made with curl")
	one.keys("i") // opened from the list, the transcript has the keys
	say(one, "said in the first terminal")
	two.waitFor("hello from chat: said in the first terminal")
}

func TestTUIReconnectsAfterTheServerRestartsAndCatchesUp(t *testing.T) {
	t.Parallel()
	f := newTUIFixture(t)
	srv := f.serve(t, "")
	port := srv.url[strings.LastIndex(srv.url, ":")+1:]
	term := f.attached(t, srv.url)
	newChat(term, "teller")
	say(term, "tell me a story")
	term.waitFor("once upon a time")

	srv.kill(t)
	term.waitFor("reconnecting")
	// The screen stays while the server is away.
	term.waitFor("once upon a time")

	again := f.serve(t, port)
	term.waitFor("● connected · " + again.url)
	// The restarted server resumes the run; the TUI follows it to its end
	// without being told anything but the events.
	term.waitFor("the end")
	term.waitFor("○ ready")
	// And it hears what happens after the restart.
	postJSON(t, again.url, "/v1/sessions", `{"agent": "chat", "message": {"text": "after the restart"}}`)
	term.keys("Escape", "Escape")
	term.waitFor("after the restart")
}

func TestTUIApprovesACallHeldForApproval(t *testing.T) {
	t.Parallel()
	term := startChat(t, "guard")
	say(term, "how is the sky?")
	term.waitFor("pending calls (1)")
	term.waitFor("bash_weather")
	term.keys("C-l")
	term.keys("a")
	term.waitFor("guard saw: sunny and 21C")
	term.waitGone("pending calls")
}

// The composer edits as readline does (ctrl+a/e, ctrl+k/u/w), and the
// footer shows the keys of whatever has the focus.
func TestTUIComposerKeepsReadlineKeysAndTheFooterFollowsTheFocus(t *testing.T) {
	t.Parallel()
	term := startChat(t, "chat")
	term.waitFor("esc transcript")
	term.typeText("world")
	term.keys("C-a")
	term.typeText("hello ")
	term.keys("C-e")
	term.typeText(" and junk")
	term.keys("C-w", "C-w", "BSpace")
	term.typeText("!")
	term.keys("Enter")
	term.waitFor("hello from chat: hello world!")
	term.waitFor("○ ready")
	term.typeText("dropped text")
	term.keys("C-a", "C-k")
	term.typeText("dropped too")
	term.keys("C-u")
	term.typeText("kept")
	term.keys("Enter")
	term.waitFor("hello from chat: kept")
	// None of them ran a session command: no picker, no export, no
	// hard cancel.
	if screen := term.capture(); strings.Contains(screen, "export to:") || strings.Contains(screen, "continue with") || strings.Contains(screen, "hard cancel:") {
		t.Fatalf("an editing key ran a session command:\n%s", screen)
	}
	// The transcript has its own keys, and says so; it does not invite
	// to write in the composer it took the keys from.
	term.keys("Escape")
	screen := term.waitFor("i write")
	for _, want := range []string{"e export", "c continue with"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the transcript's footer has no %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "Write a message") {
		t.Errorf("the transcript has the keys and the screen says Write a message:\n%s", screen)
	}
	term.keys("i")
	term.waitFor("enter send")
}

// ctrl+n stores nothing until the first message: a new session left
// empty leaves no trace in the list.
func TestTUINewSessionIsStoredByItsFirstMessage(t *testing.T) {
	t.Parallel()
	term := startChat(t, "chat")
	term.waitFor("stored with its first message")
	term.keys("Escape", "Escape")
	term.waitFor("No sessions yet")
	newChat(term, "chat")
	say(term, "now it counts")
	term.waitFor("hello from chat: now it counts")
	term.keys("Escape", "Escape")
	screen := term.waitFor("now it counts")
	if strings.Contains(screen, "No sessions yet") || strings.Count(screen, "chat  ") > 1 {
		t.Fatalf("want the one session in the list:\n%s", screen)
	}
}

// Export asks where, showing the path it offers, writes only on enter,
// and says where it wrote.
func TestTUIExportAsksWhereAndSaysWhereItWrote(t *testing.T) {
	t.Parallel()
	f := newTUIFixture(t)
	term := f.embedded(t, "-a", "chat")
	newChat(term, "chat")
	say(term, "export me")
	term.waitFor("hello from chat: export me")
	term.keys("Escape", "e")
	term.waitFor("export to: ")
	term.waitFor("an existing file is never replaced")
	if md, _ := filepath.Glob(filepath.Join(f.dir, "*.md")); len(md) != 0 {
		t.Fatalf("wrote %v before being told where", md)
	}
	out := filepath.Join(t.TempDir(), "talk.md")
	term.keys("C-u")
	term.typeText(out)
	term.keys("Enter")
	term.waitFor("exported to " + out[:min(len(out), 60)])
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "hello from chat: export me") {
		t.Errorf("the export holds no answer:\n%s", data)
	}
	if md, _ := filepath.Glob(filepath.Join(f.dir, "*.md")); len(md) != 0 {
		t.Errorf("wrote %v into the working directory too", md)
	}
}

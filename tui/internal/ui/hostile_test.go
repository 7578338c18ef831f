package ui

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Payloads a model, a tool or another client could put in the text the
// TUI shows, each with the mark that would show, in what the terminal
// receives, that it got through.
var hostile = []struct{ name, payload, mark string }{
	{"DCS", "\x1bPq#0;2;0;0;0dcspayload\x1b\\", "dcspayload"},
	{"APC", "\x1b_Ga=T,f=100;apcpayload\x1b\\", "apcpayload"},
	{"OSC 52", "\x1b]52;c;b3NjcGF5bG9hZA==\x07", "]52;"},
	{"OSC 8", "\x1b]8;;https://evil.example/\x1b\\", "evil.example"},
	{"CSI", "\x1b[8;5;5t", "[8;5;5t"},
	{"C1 CSI", "\u009b8;6;6t", "8;6;6t"},
	{"C1 OSC", "\u009d52;c;Yw==\u009c", "Yw=="},
	// The terminal stream has bells of the TUI's own (its queries end
	// with one): the frame is where a bell from the server would show.
	{"bell", "\a", ""},
}

// evil is s with every payload after each of its words.
func evil(s string) string {
	var all strings.Builder
	for _, h := range hostile {
		all.WriteString(h.payload)
	}
	return strings.ReplaceAll(s, " ", all.String()+" ") + all.String()
}

// foreign lists the escape sequences and controls of a frame that are
// not the TUI's own styling (SGR).
func foreign(frame string) []string {
	var out []string
	for s := frame; s != ""; {
		seq, _, n, _ := ansi.DecodeSequence(s, ansi.NormalState, nil)
		s = s[max(n, 1):]
		switch {
		case seq == "\n":
		case strings.HasPrefix(seq, "\x1b[") && strings.HasSuffix(seq, "m") && !strings.ContainsAny(seq[2:len(seq)-1], "<=>?"):
		case len(seq) > 0 && (seq[0] < 0x20 || seq[0] == 0x7f || strings.HasPrefix(seq, "\u0080") || seq[0] == 0xc2 && len(seq) > 1 && seq[1] < 0xa0):
			out = append(out, seq)
		}
	}
	return out
}

func TestFlowServerTextCannotDriveTheTerminal(t *testing.T) {
	f, c := newFakeServer(t)
	fixtures(f)
	meta := session(80, evil("Evil title here now"), evil("mallory agent"), agentsv1.SessionStatus_SESSION_STATUS_READY, 3, "")
	f.sessions = append([]*agentsv1.SessionMeta{meta}, f.sessions...)
	f.turns = map[string][]*agentsv1.Turn{meta.GetId(): {
		{Index: 0, Kind: &agentsv1.Turn_User{User: &agentsv1.UserTurn{
			Text: evil("please read the file"),
			Mail: []*agentsv1.MailEnvelope{{Body: &agentsv1.MailBody{Kind: &agentsv1.MailBody_AgentMessage{AgentMessage: &agentsv1.AgentMessage{Text: evil("mail from a peer")}}}}},
		}}},
		{Index: 1, Kind: &agentsv1.Turn_Llm{Llm: &agentsv1.LlmTurn{
			Text:      evil("Answer with some words and **bold** text") + "\n\n```\n" + evil("code line here") + "\n```\n",
			Thinking:  evil("thinking about the answer"),
			ToolCalls: []*agentsv1.ToolCall{{Id: "c1", Name: evil("bash tool"), Arguments: `{"path":"` + evil("/etc/passwd x") + `"}`, Kind: agentsv1.ToolKind_TOOL_KIND_BASH}},
			Model:     evil("model name"),
		}}},
		{Index: 2, Kind: &agentsv1.Turn_User{User: &agentsv1.UserTurn{ToolResults: []*agentsv1.ToolResult{
			{CallId: "c1", Name: "bash_tool", Text: evil("root:x:0:0 result text"), Status: agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK},
		}}}},
	}}

	m := newTestModel(t, c, nil, func(cfg *Config) { cfg.SessionID = meta.GetId() })
	var mu sync.Mutex
	rec := recorder{Model: m, mu: &mu, frame: new(string), raw: new(string)}
	tm := teatest.NewTestModel(t, rec, teatest.WithInitialTermSize(120, 50))
	go Forward(m.Subscribe(t.Context()), tm.Send)
	fl := &flow{t: t, tm: tm, f: f, rec: rec}
	fl.waitFor("the answer", func(s string) bool { return strings.Contains(s, "Answer") })
	fl.press("[", "[", "space") // the answer: its thinking and its calls in full
	fl.waitFor("the call's result", func(s string) bool { return strings.Contains(s, "root:x:0:0") })
	mu.Lock()
	conversation := *rec.raw
	mu.Unlock()
	// A live event says the same.
	f.emit(&agentsv1.Event{SessionId: meta.GetId(), Body: &agentsv1.Event_SessionUpdated{SessionUpdated: &agentsv1.SessionUpdated{Meta: meta}}})
	fl.press("esc", "esc") // the selection goes, then the conversation
	fl.waitFor("the list", func(s string) bool { return strings.Contains(s, "Plan the 2.0 release") })

	mu.Lock()
	list := *rec.raw
	mu.Unlock()
	fl.quit()
	out, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(5*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hostile {
		if h.mark != "" && strings.Contains(string(out), h.mark) {
			t.Errorf("%s reached the terminal: %q in the output", h.name, h.mark)
		}
	}
	for name, frame := range map[string]string{"conversation": conversation, "list": list} {
		if got := foreign(frame); len(got) > 0 {
			t.Errorf("the %s holds sequences the TUI did not write: %q", name, got)
		}
	}
}

func TestFlowServerErrorCannotDriveTheTerminal(t *testing.T) {
	f, c := newFakeServer(t)
	fixtures(f)
	f.getErr = connect.NewError(connect.CodeNotFound, errors.New(evil("no such session here")))
	m := newTestModel(t, c, nil, func(cfg *Config) { cfg.SessionID = id(1) })
	var mu sync.Mutex
	rec := recorder{Model: m, mu: &mu, frame: new(string), raw: new(string)}
	tm := teatest.NewTestModel(t, rec, teatest.WithInitialTermSize(120, 30))
	fl := &flow{t: t, tm: tm, f: f, rec: rec}
	fl.waitFor("the error", func(s string) bool { return strings.Contains(s, "load session: not_found: no") })
	mu.Lock()
	view := *rec.raw
	mu.Unlock()
	fl.quit()
	if got := foreign(view); len(got) > 0 {
		t.Errorf("the frame holds sequences the TUI did not write: %q", got)
	}
}

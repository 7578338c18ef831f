package tokens

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/convfile"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

// conversation is one request of the corpus, named for the report.
type conversation struct {
	name string
	req  llm.Request
}

// corpus is the conversations the error bounds are measured on: the
// importer's agents-exe conversations, rendered as the runner renders
// turns, and a 50-turn session built from the texts of testdata (prose,
// Go code, a JSON tool result, CJK text, command output).
func corpus(t testing.TB) []conversation {
	t.Helper()
	var out []conversation
	files, err := filepath.Glob("../convfile/testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.json") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := convfile.Decode(data)
		if err != nil {
			t.Fatalf("decode %s: %v", f, err)
		}
		msgs := []llm.Message{llm.SystemMessage("You are a careful assistant with bash tools.")}
		for _, turn := range c.Turns {
			msgs = appendTurn(msgs, turn)
		}
		out = append(out, conversation{name: filepath.Base(f), req: llm.Request{Messages: msgs, Tools: corpusTools}})
	}
	if len(out) < 3 {
		t.Fatalf("only %d agents-exe conversations", len(out))
	}
	return append(out, conversation{name: "synthetic, 50 turns", req: llm.Request{Messages: history(t, 50), Tools: corpusTools}})
}

// appendTurn renders a turn as the runner does: an LLM turn is an
// assistant message, a user turn its tool results then its text and
// images.
func appendTurn(msgs []llm.Message, t session.Turn) []llm.Message {
	switch {
	case t.LLM != nil:
		m := llm.Message{Role: llm.RoleAssistant, Text: t.LLM.Text, Thinking: t.LLM.Thinking}
		for _, c := range t.LLM.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		return append(msgs, m)
	case t.User != nil:
		for _, r := range t.User.ToolResults {
			msgs = append(msgs, llm.ToolResultMessage(r.CallID, r.Text))
		}
		var images []llm.Image
		for _, a := range t.User.Attachments {
			images = append(images, llm.ImageData(a.MediaType, a.Data))
		}
		if t.User.Text != "" || len(images) > 0 {
			msgs = append(msgs, llm.UserMessage(t.User.Text, images...))
		}
	}
	return msgs
}

// texts are the files of testdata, each cut in pieces of about a
// kilobyte at line ends so that one tool result is not the whole file.
func texts(t testing.TB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, name := range []string{"prose.md", "code.go.txt", "result.json", "cjk.txt", "bash.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		for len(s) > 0 {
			cut := len(s)
			if cut > 1024 {
				if i := strings.IndexByte(s[1024:], '\n'); i >= 0 {
					cut = 1024 + i + 1
				}
			}
			out[name] = append(out[name], s[:cut])
			s = s[cut:]
		}
	}
	return out
}

// history is a session of n turns as an agent with bash tools makes them:
// the user asks, the model calls a tool, the result comes back, the model
// answers.
func history(t testing.TB, n int) []llm.Message {
	t.Helper()
	tx := texts(t)
	results := []string{"bash.txt", "code.go.txt", "result.json", "cjk.txt", "prose.md"}
	pick := func(name string, i int) string { return tx[name][i%len(tx[name])] }
	msgs := []llm.Message{llm.SystemMessage(pick("prose.md", 0))}
	for i := range n {
		switch i % 4 {
		case 0:
			msgs = append(msgs, llm.UserMessage(strings.SplitN(pick("prose.md", i), "\n\n", 2)[0]))
		case 1:
			id := fmt.Sprintf("call_%08x%08x", i*2654435761, i*40503)
			msgs = append(msgs,
				llm.Message{Role: llm.RoleAssistant, Thinking: "I should look at the output first.", ToolCalls: []llm.ToolCall{
					{ID: id, Name: "bash_run", Arguments: fmt.Sprintf(`{"command":"sed -n '%d,%dp' testdata/file %d","timeout_seconds":30}`, i, i+40, i)},
				}},
				llm.ToolResultMessage(id, pick(results[i%len(results)], i)))
		case 2:
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Text: pick(results[(i+2)%len(results)], i/2)})
		case 3:
			msgs = append(msgs, llm.UserMessage(pick("cjk.txt", i)))
		}
	}
	return msgs
}

// corpusTools are tool definitions as an agent with bash tools offers
// them.
var corpusTools = []llm.ToolSpec{
	{
		Name:        "bash_run",
		Description: "Run a command with bash in the session's working directory and return its output.",
		Parameters:  []byte(`{"type":"object","properties":{"command":{"type":"string","description":"The command line."},"timeout_seconds":{"type":"integer","description":"Seconds before the command is killed."}},"required":["command"]}`),
	},
	{
		Name:        "prompt_agent_reviewer",
		Description: "Ask the reviewer agent to review a change and return its verdict.",
		Parameters:  []byte(`{"type":"object","properties":{"prompt":{"type":"string","description":"What to review and why."},"severity":{"type":"string","enum":["low","medium","high"],"description":"How careful to be."}},"required":["prompt"]}`),
	},
	{Name: "list_sessions", Description: "List the sessions of the current owner."},
}

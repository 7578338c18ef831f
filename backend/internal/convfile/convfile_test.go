package convfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/session"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Each conversation of testdata decodes to its golden file: the session
// id and fork link, and the turns oldest first in this server's model.
func TestDecodeGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, file := range files {
		if strings.HasSuffix(file, ".golden.json") {
			continue
		}
		n++
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			c := decodeFile(t, file)
			got, err := json.MarshalIndent(c, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(file, ".json") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s decodes to\n%s\nwant (%s)\n%s", file, got, golden, want)
			}
		})
	}
	if n < 3 {
		t.Fatalf("only %d conversations in testdata", n)
	}
}

func decodeFile(t *testing.T, file string) *Conversation {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Decode(data)
	if err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	return c
}

// The properties the golden files show, spelled out: what a reader of
// the import must be able to rely on.
func TestDecodeConversation(t *testing.T) {
	t.Parallel()
	c := decodeFile(t, "testdata/conv.1f7c2d9a-3b4e-4c5d-8e6f-7a8b9c0d1e2f.json")
	// The id is the session's, not the one in the file name (agents-exe
	// names files after another id).
	if c.SessionID != "6c1f0b8e-5a4e-4a43-9d8e-2f1d3c4b5a60" || c.ForkedFrom != "" {
		t.Errorf("ids = %q, %q", c.SessionID, c.ForkedFrom)
	}
	if len(c.Turns) != 6 {
		t.Fatalf("%d turns, want 6", len(c.Turns))
	}
	for i, turn := range c.Turns {
		if turn.Index != i || (turn.User == nil) == (turn.LLM == nil) || (turn.User != nil) != (i%2 == 0) {
			t.Errorf("turn %d: index %d, user %v, llm %v: want alternating user and LLM turns from the oldest", i, turn.Index, turn.User, turn.LLM)
		}
	}
	if got := c.Turns[0].User.Text; got != "List the files and tell me what the README says." {
		t.Errorf("first turn = %q, want the oldest query", got)
	}
	calls := c.Turns[1].LLM
	if calls.Thinking != "The user wants the files first, then the README." || calls.Model != "kimi-k2.5" || calls.FinishReason != "tool_calls" ||
		len(calls.ToolCalls) != 2 || calls.ToolCalls[1].Name != "bash_read-file" || calls.ToolCalls[1].Arguments != `{"filepath": "README.md"}` {
		t.Errorf("model turn with calls = %+v", calls)
	}
	if want := (session.Usage{Prompt: 1353, Completion: 58, Cached: 1024}); calls.Usage != want {
		t.Errorf("usage = %+v, want %+v", calls.Usage, want)
	}
	results := c.Turns[2].User.ToolResults
	if len(results) != 2 || results[0].CallID != calls.ToolCalls[0].ID || results[0].Text != "README.md\nsrc/main.hs\n" ||
		results[1].Text != `{"path":"README.md","text":"# Demo <project> & more\n"}` || results[1].Status != session.ResultOK {
		t.Errorf("tool results = %+v", results)
	}
	// Usage only in the turn's byte usage, and Claude's names.
	if want := (session.Usage{Prompt: 1500, Completion: 40, Cached: 1280, Reasoning: 12}); c.Turns[3].LLM.Usage != want {
		t.Errorf("usage from byteUsage = %+v, want %+v", c.Turns[3].LLM.Usage, want)
	}
	if want := (session.Usage{Prompt: 1700, Completion: 5}); c.Turns[5].LLM.Usage != want {
		t.Errorf("input_tokens usage = %+v, want %+v", c.Turns[5].LLM.Usage, want)
	}
	att := c.Turns[4].User.Attachments
	if len(att) != 1 || att[0].Name != "dot.png" || att[0].MediaType != "image/png" || string(att[0].Data) != "\x89PNG\r\n\x1a\n" {
		t.Errorf("attachments = %+v", att)
	}
}

// A fork keeps its link; its last model turn's call, never answered,
// gets a result saying so, so the session can go on.
func TestDecodeForkWithUnansweredCall(t *testing.T) {
	t.Parallel()
	c := decodeFile(t, "testdata/review.session.json")
	if c.ForkedFrom != "6c1f0b8e-5a4e-4a43-9d8e-2f1d3c4b5a60" {
		t.Errorf("forked from %q", c.ForkedFrom)
	}
	last := c.Turns[len(c.Turns)-1]
	if last.User == nil || len(last.User.ToolResults) != 1 || last.User.ToolResults[0].Status != session.ResultCancelled ||
		last.User.ToolResults[0].CallID != "bash_read-file:2" || last.User.ToolResults[0].Text != noResultText {
		t.Errorf("last turn = %+v, want a result for the unanswered call", last)
	}
	if len(c.Turns) != 7 || last.Index != 6 {
		t.Errorf("%d turns, last index %d; want 6 from the file and the added results", len(c.Turns), last.Index)
	}
}

// An older file: _v0 turns, plain tool responses, an asynchronous round
// saved with a call pending, an upper-case id.
func TestDecodeOlderEncodings(t *testing.T) {
	t.Parallel()
	c := decodeFile(t, "testdata/async.session.json")
	if c.SessionID != "d0d1d2d3-e4e5-4f60-8172-839405162738" {
		t.Errorf("id %q, want it in canonical form", c.SessionID)
	}
	if got := c.Turns[2].User.ToolResults; len(got) != 1 || got[0].Text != "Tue Apr 14 10:00:00 UTC 2026\n" {
		t.Errorf("plain response = %+v", got)
	}
	partial := c.Turns[4].User.ToolResults
	if len(partial) != 2 || partial[0].Text != `{"up":"3 days"}` || partial[0].Status != session.ResultOK ||
		partial[1].Name != "bash_whoami" || partial[1].Status != session.ResultCancelled || partial[1].Text != pendingText {
		t.Errorf("partial turn results = %+v", partial)
	}
	if len(c.Turns) != 5 {
		t.Errorf("%d turns, want 5", len(c.Turns))
	}
}

func TestToolResponseShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, response, want string }{
		{"text", `{"type": "text", "content": "hello"}`, "hello"},
		{"json", `{"type": "json", "content": {"a": [1, 2]}}`, `{"a":[1,2]}`},
		{"media", `{"type": "media", "mimeType": "image/png", "base64Data": "iVBORw0KGgo=", "filename": "a.png"}`, "[media: a.png, image/png, 8 bytes]"},
		{"mixed", `{"type": "mixed", "parts": [{"type": "text", "text": "see"}, {"type": "media", "mimeType": "audio/ogg", "base64Data": "AAAA"}]}`, "see\n[media: audio/ogg, 3 bytes]"},
		{"legacy string", `"plain"`, "plain"},
		{"legacy number", `42`, "42"},
		{"legacy wrapper", `{"_userToolResponse": "wrapped"}`, "wrapped"},
		// agents-exe reads an object that is not of the tagged shape as
		// plain JSON.
		{"untagged object", `{"type": "text", "content": 7}`, `{"content":7,"type":"text"}`},
		{"unknown type", `{"type": "video"}`, `{"type":"video"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			call := `{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}`
			doc := `{"sessionId": "6c1f0b8e-5a4e-4a43-9d8e-2f1d3c4b5a60", "turnId": "6c1f0b8e-5a4e-4a43-9d8e-2f1d3c4b5a61", "turns": [
				{"tag": "UserTurn", "contents": {"userQuery": null, "userToolResponses": [[` + call + `, ` + tc.response + `]]}},
				{"tag": "LlmTurn", "contents": {"llmResponse": {"responseText": null, "responseThinking": null, "rawResponse": {}}, "llmToolCalls": [` + call + `]}}]}`
			c, err := Decode([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Turns[1].User.ToolResults; len(got) != 1 || got[0].Text != tc.want {
				t.Errorf("results = %+v, want text %q", got, tc.want)
			}
		})
	}
}

// A file that is not a conversation is refused with the place and the
// reason.
func TestDecodeMalformed(t *testing.T) {
	t.Parallel()
	const id = `"sessionId": "6c1f0b8e-5a4e-4a43-9d8e-2f1d3c4b5a60"`
	user := func(contents string) string {
		return `{` + id + `, "turns": [{"tag": "UserTurn", "contents": ` + contents + `}]}`
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", ``, "not JSON: the file ends in the middle of a value"},
		{"cut short", `{` + id + `, "turns": [{"tag": "UserTu`, "not JSON"},
		{"not UTF-8", "{\"sessionId\": \"\xff\"}", "the file is not UTF-8 text"},
		{"a list", `[]`, "want a JSON object (an agents-exe session), got a list"},
		{"two values", `{} {}`, "the file holds more than one JSON value"},
		{"duplicate key", `{` + id + `, ` + id + `, "turns": []}`, `the key "sessionId" is given twice`},
		{"no session id", `{"turns": []}`, "sessionId: missing (want a session id (a UUID))"},
		{"bad session id", `{"sessionId": "conv-1", "turns": []}`, `sessionId: "conv-1" is not a UUID`},
		{"bad fork id", `{` + id + `, "forkedFromSessionId": 3, "turns": []}`, "forkedFromSessionId: want a session id (a UUID), got a number"},
		{"no turns", `{` + id + `}`, "turns: missing (want a list)"},
		{"unknown tag", `{` + id + `, "turns": [{"tag": "SystemTurn", "contents": {}}]}`, `turns[0].tag: unknown turn "SystemTurn"`},
		{"no contents", `{` + id + `, "turns": [{"tag": "UserTurn"}]}`, "turns[0].contents: missing (want an object)"},
		{"query a number", user(`{"userQuery": 1}`), "turns[0].contents.userQuery: want a string, an object or null, got a number"},
		{"bad pair", user(`{"userToolResponses": [["only the call"]]}`), "turns[0].contents.userToolResponses[0]: want a pair [call, response], got a list of 1"},
		{"call without name", user(`{"userToolResponses": [[{"id": "c", "function": {}}, "x"]]}`), "turns[0].contents.userToolResponses[0][0].function.name: missing (want a string)"},
		{"bad media", user(`{"userQuery": {"text": "look", "media": [{"mimeType": "image/png", "base64Data": "%%"}]}}`), "turns[0].contents.userQuery.media[0].base64Data: not base64"},
		{"bad usage", `{` + id + `, "turns": [{"tag": "LlmTurn", "contents": {"llmResponse": {"responseText": "x", "responseTokenUsage": {"prompt_tokens": -1}}, "llmToolCalls": []}}]}`,
			"turns[0].contents.llmResponse.responseTokenUsage.prompt_tokens: want a whole number of tokens, got -1"},
		{"too deep", `{` + id + `, "turns": ` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, "more than 100 levels deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Decode([]byte(tc.doc))
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode = %v, want an *Error containing %q", err, tc.want)
			}
		})
	}
}

func TestIsConversationFile(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"conv.9fb6260f-f793-49ba-ac1e-67568cc6a6ed.json":         true,
		"dir/conv.9fb6260f-f793-49ba-ac1e-67568cc6a6ed.json":     true,
		"gh-100.session.json":                                    true,
		"conv.latest.json":                                       false,
		"conv.9fb6260f-f793-49ba-ac1e-67568cc6a6ed.json.bak":     false,
		".session.json":                                          false,
		"agents.json":                                            false,
		"gh-100.session.md":                                      false,
		"conv.9fb6260f-f793-49ba-ac1e-67568cc6a6ed.session.json": true,
	} {
		if got := IsConversationFile(name); got != want {
			t.Errorf("IsConversationFile(%q) = %v, want %v", name, got, want)
		}
	}
}

// Session files of the shape of agents-exe's gh-100.session.json keep a
// turn's usage only in the provider's raw answer: it is imported from
// there when the turn records none of its own.
func TestUsageFromTheRawResponse(t *testing.T) {
	t.Parallel()
	doc := `{"sessionId": "6c1f0b8e-5a4e-4a43-9d8e-2f1d3c4b5a60", "turnId": "6c1f0b8e-5a4e-4a43-9d8e-2f1d3c4b5a61", "turns": [
		{"tag": "LlmTurn", "contents": {"llmResponse": {"responseText": "hi", "responseThinking": null,
			"rawResponse": {"model": "gpt-4o-mini", "usage": {"prompt_tokens": 1200, "completion_tokens": 34, "prompt_tokens_details": {"cached_tokens": 1000}}}},
			"llmToolCalls": []}},
		{"tag": "UserTurn", "contents": {"userQuery": {"text": "hello"}, "userToolResponses": []}}]}`
	c, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var u session.Usage
	for _, turn := range c.Turns {
		if turn.LLM != nil {
			u = turn.LLM.Usage
		}
	}
	if u.Prompt != 1200 || u.Completion != 34 || u.Cached != 1000 {
		t.Errorf("usage %+v, want the raw answer's", u)
	}
}

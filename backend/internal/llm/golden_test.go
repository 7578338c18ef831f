package llm

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// wideConversation adds to conversation what else a history can hold:
// text the encoder escapes (HTML characters, quotes, control characters,
// non-ASCII), an assistant turn with text, thinking and a call without
// arguments, an empty assistant turn, and a call id Mistral must rewrite.
func wideConversation() Request {
	req := conversation()
	req.Messages = append(req.Messages,
		UserMessage("Compare <a> & <b>: \"quoted\", tab\there, é, 日本, \u2028."),
		Message{Role: RoleAssistant, Text: "Let me list it.", Thinking: "Twice, to be sure.", ToolCalls: []ToolCall{
			{ID: "toolu_01A09q90qw90lq917835lq9", Name: "list_dir"},
		}},
		ToolResultMessage("toolu_01A09q90qw90lq917835lq9", "Error: </script> not found"),
		Message{Role: RoleAssistant},
		UserMessage("Two images.", ImageData("image/jpeg", []byte{0xff, 0xd8, 0xff}), Image{URL: "https://example.com/a.png?x=1&y=2"}),
		Message{Role: RoleAssistant, Text: "Done."},
	)
	return req
}

var flavors = []Flavor{FlavorOpenAI, FlavorMistral, FlavorKimi, FlavorClaude}

// TestRequestBodyGolden pins the request body, byte for byte, for every
// flavor, streamed and not. A request with fewer options (no tools, no
// temperature, no cap, no session) goes with the unstreamed call.
//
// The body is the same whether the request carries its messages encoded
// for the client's flavor, encoded for another one (which the client must
// not send), encoded only in part, or not at all.
func TestRequestBodyGolden(t *testing.T) {
	t.Parallel()
	for _, flavor := range flavors {
		for _, stream := range []bool{true, false} {
			name := string(flavor) + "-complete"
			req := wideConversation()
			if stream {
				name = string(flavor) + "-stream"
			} else {
				req.Tools, req.Temperature, req.MaxTokens, req.SessionID = nil, nil, 0, ""
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				path := filepath.Join("testdata", "request", name+".json")
				body, err := encodeRequest(dialectFor(flavor), req, stream)
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, path, body.bytes())
				if *update {
					return
				}
				for _, by := range flavors {
					encoded, err := EncodeMessages(by, req.Messages)
					if err != nil {
						t.Fatal(err)
					}
					for _, part := range []int{len(encoded), len(encoded) - 1} {
						r := req
						r.Encoded = encoded[:part]
						if used := encodedFor(flavor, r); used != (by == flavor && part == len(encoded)) {
							t.Errorf("encoded by %s, %d of %d messages: used %v", by, part, len(encoded), used)
						}
						body, err := encodeRequest(dialectFor(flavor), r, stream)
						if err != nil {
							t.Fatal(err)
						}
						got := body.bytes()
						if !bytes.Equal(got, readGolden(t, path)) {
							t.Errorf("with %d of %d messages encoded by %s, body differs from %s:\n got %s", part, len(encoded), by, path, got)
						}
					}
				}
			})
		}
	}
}

func TestEncodeMessagesRejectsBadInput(t *testing.T) {
	t.Parallel()
	if _, err := EncodeMessages("GeminiV1", []Message{UserMessage("hi")}); err == nil || !strings.Contains(err.Error(), "GeminiV1") {
		t.Errorf("unknown flavor: error %v, want one naming it", err)
	}
	msgs := []Message{UserMessage("hi"), {Role: RoleTool, Text: "x"}}
	if _, err := EncodeMessages(FlavorOpenAI, msgs); err == nil || !strings.Contains(err.Error(), "message 1: tool message without tool call id") {
		t.Errorf("tool result without call id: error %v", err)
	}
	// An empty flavor is OpenAIv1's, as for a client.
	encoded, err := EncodeMessages("", msgs[:1])
	if err != nil || !encodedFor(FlavorOpenAI, Request{Messages: msgs[:1], Encoded: encoded}) {
		t.Errorf("EncodeMessages with no flavor = %v, %v; want OpenAIv1's", encoded, err)
	}
}

func readGolden(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	w, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, w) {
		t.Errorf("body differs from %s:\n got %s\nwant %s", path, got, w)
	}
}

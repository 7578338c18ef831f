package llm

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
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

// TestRequestBodyGolden pins the request body, byte for byte, for every
// flavor, streamed and not. A request with fewer options (no tools, no
// temperature, no cap, no session) goes with the unstreamed call.
func TestRequestBodyGolden(t *testing.T) {
	t.Parallel()
	for _, flavor := range []Flavor{FlavorOpenAI, FlavorMistral, FlavorKimi, FlavorClaude} {
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
				got, err := encodeRequest(dialectFor(flavor), req, stream)
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, filepath.Join("testdata", "request", name+".json"), got)
			})
		}
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("body differs from %s:\n got %s\nwant %s", path, got, want)
	}
}

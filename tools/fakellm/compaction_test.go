package fakellm_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agents-os/agents/tools/fakellm"
)

// compactionBody is a compaction request as the agent server sends it: its
// prompt, then the conversation as a transcript in one user message.
func compactionBody(userText string) body {
	return body{"model": "test-model", "messages": []any{
		msg("system", "You summarize conversations so that they can continue."),
		msg("user", userText),
	}}
}

func transcript(lines ...string) string {
	return "Summarize the conversation below.\n<transcript>\n" + strings.Join(lines, "\n") + "\n</transcript>"
}

// longTranscript is far more conversation than a summary may hold.
func longTranscript() string {
	var lines []string
	for i := range 300 {
		lines = append(lines,
			fmt.Sprintf("[user] request number %d %s", i, strings.Repeat("with many words ", 10)),
			fmt.Sprintf("[tool tool_%d] result", i),
			"[assistant] "+strings.Repeat("a long answer ", 20))
	}
	return transcript(lines...) + "\nInstruction: " + strings.Repeat("keep every file path ", 20)
}

func TestCompactionSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		user            string
		want            string   // the exact summary, or "" to check the others
		wantContains    []string // in order
		wantNotContains []string
	}{
		{
			name: "the whole conversation",
			user: transcript(
				"[summary] The user set up a Go project. Tests pass.",
				"[user] Please add a flag for the context window to the fake model server, with docs",
				"[assistant] I will read the code first.",
				"[tool bash] ok",
				"[tool bash] ok",
				"[tool read_file] package x",
				"[assistant] Done: the flag is --context-window.",
				"[user] thanks",
			) + "\nInstruction: keep file paths",
			want: `Summary of the conversation so far (8 messages): earlier summary: "The user set up a Go project."; ` +
				`the user asked: "Please add a flag for the context window to the fake model …"; "thanks"; ` +
				`tools used: bash (2 times), read_file; the assistant last said: "Done: the flag is --context-window.". (kept: keep file paths)`,
		},
		{
			name: "without an instruction",
			user: transcript("[user] hello", "[assistant] hi"),
			want: `Summary of the conversation so far (2 messages): the user asked: "hello"; the assistant last said: "hi".`,
		},
		{
			name: "a message spanning lines",
			user: transcript("[user] first line", "second line", "", "[tool bash] out", "more output"),
			want: `Summary of the conversation so far (2 messages): the user asked: "first line second line"; tools used: bash.`,
		},
		{
			name: "markers inside lines",
			user: "Summarize: <transcript>[user] hi</transcript> Instruction: none",
			want: `Summary of the conversation so far (1 message): the user asked: "hi". (kept: none)`,
		},
		{
			name: "markers on their own lines, nothing between",
			user: "<transcript>\n</transcript>",
			want: `Summary of the conversation so far (0 messages): nothing to keep.`,
		},
		{
			name: "one message",
			user: transcript("[user] what time is it?"),
			want: `Summary of the conversation so far (1 message): the user asked: "what time is it?".`,
		},
		{
			name: "a summary of a summary mentions its first sentence",
			user: transcript(`[summary] Summary of the conversation so far (9 messages): the user asked: "deploy it". (kept: hosts)`, "[user] and now?"),
			want: `Summary of the conversation so far (2 messages): earlier summary: "Summary of the conversation so far (9 messages): the user asked: "deploy it"."; ` +
				`the user asked: "and now?".`,
		},
		{
			name: "capped, keeping the latest requests and the instruction",
			user: longTranscript(),
			wantContains: []string{
				"Summary of the conversation so far (900 messages): the user asked: ",
				`"request number 298 with many words`, `"request number 299 with many words`,
				"earlier requests omitted)",
				"tools used: tool_0, tool_1, tool_2, tool_3, tool_4, 295 more",
				`the assistant last said: "a long answer`,
				"(kept: keep every file path",
			},
			wantNotContains: []string{`"request number 0 `, "tool_5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, fakellm.Rules{})
			got := completeText(t, srv, compactionBody(tt.user))
			if n := utf8.RuneCountInString(got); n > 800 {
				t.Errorf("summary is %d characters, want at most 800", n)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("summary =\n%s\nwant\n%s", got, tt.want)
			}
			rest := got
			for _, want := range tt.wantContains {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Errorf("summary lacks %q (in order):\n%s", want, got)
					continue
				}
				rest = rest[i+len(want):]
			}
			for _, unwanted := range tt.wantNotContains {
				if strings.Contains(got, unwanted) {
					t.Errorf("summary has %q:\n%s", unwanted, got)
				}
			}
			if again := completeText(t, srv, compactionBody(tt.user)); again != got {
				t.Errorf("second answer differs:\n%s\nfirst:\n%s", again, got)
			}
			if s := streamChat(t, srv, compactionBody(tt.user)); s.text != got {
				t.Errorf("streamed summary differs:\n%s\nnot streamed:\n%s", s.text, got)
			}
		})
	}
}

func TestCompactionUsage(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{})
	b := compactionBody(longTranscript())
	c := complete(t, srv, b)
	r := srv.Requests()[0]
	if !r.IsCompaction() || c.Usage.PromptTokens != r.PromptTokens {
		t.Errorf("compaction %t, usage prompt_tokens %d, recorded %d; want a compaction counted as usual", r.IsCompaction(), c.Usage.PromptTokens, r.PromptTokens)
	}
	if want := (utf8.RuneCountInString(*c.Choices[0].Message.Content) + 3) / 4; c.Usage.CompletionTokens != want {
		t.Errorf("completion_tokens = %d, want %d", c.Usage.CompletionTokens, want)
	}
	if c.Usage.CompletionTokens*10 > c.Usage.PromptTokens {
		t.Errorf("summary of %d tokens for a prompt of %d: it does not compact", c.Usage.CompletionTokens, c.Usage.PromptTokens)
	}
}

func TestCompactionDetection(t *testing.T) {
	t.Parallel()
	catchAll := fakellm.Rule{Name: "catch-all", Reply: fakellm.Reply{Text: "caught"}}
	request := compactionBody(transcript("[user] hello"))
	summary := `Summary of the conversation so far (1 message): the user asked: "hello".`
	tests := []struct {
		name           string
		rules          fakellm.Rules
		body           body
		wantText       string
		wantRule       int
		wantCompaction bool
	}{
		{
			name:     "a catch-all rule does not take it",
			rules:    fakellm.Rules{Rules: []fakellm.Rule{catchAll}},
			body:     request,
			wantText: summary, wantRule: -1, wantCompaction: true,
		},
		{
			name:     "nor does the default reply",
			rules:    fakellm.Rules{Default: &fakellm.Reply{Text: "default"}},
			body:     request,
			wantText: summary, wantRule: -1, wantCompaction: true,
		},
		{
			name: "a compaction rule answers it, after the catch-all",
			rules: fakellm.Rules{Rules: []fakellm.Rule{catchAll, {
				Name: "compaction", Match: fakellm.Match{Compaction: true}, Reply: fakellm.Reply{Text: "scripted: {{summary}}"},
			}}},
			body:     request,
			wantText: "scripted: " + summary, wantRule: 1, wantCompaction: true,
		},
		{
			name: "a compaction rule whose conditions fail leaves it to the built-in summary",
			rules: fakellm.Rules{Rules: []fakellm.Rule{{
				Match: fakellm.Match{Compaction: true, Model: "other"}, Reply: fakellm.Reply{Text: "scripted"},
			}, catchAll}},
			body:     request,
			wantText: summary, wantRule: -1, wantCompaction: true,
		},
		{
			name: "a compaction rule never answers another request",
			rules: fakellm.Rules{Rules: []fakellm.Rule{
				{Match: fakellm.Match{Compaction: true}, Reply: fakellm.Reply{Text: "scripted"}},
				{Reply: fakellm.Reply{Text: "[{{summary}}]"}},
			}},
			body:     userBody("hello"),
			wantText: "[]", wantRule: 1,
		},
		{
			name:  "developer messages are part of the prompt",
			rules: fakellm.Rules{Rules: []fakellm.Rule{catchAll}},
			body: body{"model": "m", "messages": []any{
				msg("developer", "Summarize."), msg("user", transcript("[user] hello")),
			}},
			wantText: summary, wantRule: -1, wantCompaction: true,
		},
		{
			name:  "a conversation quoting a transcript is not one",
			rules: fakellm.Rules{Rules: []fakellm.Rule{catchAll}},
			body: body{"model": "m", "messages": []any{
				msg("user", "hi"), msg("assistant", "hello"), msg("user", transcript("[user] hello")),
			}},
			wantText: "caught", wantRule: 0,
		},
		{
			name:     "a transcript that does not close is not one",
			rules:    fakellm.Rules{Rules: []fakellm.Rule{catchAll}},
			body:     compactionBody("<transcript>\n[user] hello"),
			wantText: "caught", wantRule: 0,
		},
		{
			name:     "markers in the wrong order are not one",
			rules:    fakellm.Rules{Rules: []fakellm.Rule{catchAll}},
			body:     compactionBody("</transcript>\n[user] hello\n<transcript>"),
			wantText: "caught", wantRule: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, tt.rules)
			if got := completeText(t, srv, tt.body); got != tt.wantText {
				t.Errorf("answer = %q, want %q", got, tt.wantText)
			}
			r := srv.Requests()[0]
			if r.Rule != tt.wantRule || r.IsCompaction() != tt.wantCompaction {
				t.Errorf("recorded rule %d, compaction %t; want %d, %t", r.Rule, r.IsCompaction(), tt.wantRule, tt.wantCompaction)
			}
		})
	}
}

// TestCompactionWindow: a compaction request is measured like any other,
// against the file's window or its compaction rule's.
func TestCompactionWindow(t *testing.T) {
	t.Parallel()
	long := compactionBody(transcript("[user] " + tokens(200)))
	tests := []struct {
		name       string
		rules      fakellm.Rules
		wantStatus int
	}{
		{"the file's window", fakellm.Rules{ContextWindow: 100}, http.StatusBadRequest},
		{"a compaction rule's window", fakellm.Rules{Rules: []fakellm.Rule{{
			Match: fakellm.Match{Compaction: true}, ContextWindow: 100, Reply: fakellm.Reply{Text: "{{summary}}"},
		}}}, http.StatusBadRequest},
		{"a compaction rule's larger window", fakellm.Rules{ContextWindow: 100, Rules: []fakellm.Rule{{
			Match: fakellm.Match{Compaction: true}, ContextWindow: 1000, Reply: fakellm.Reply{Text: "{{summary}}"},
		}}}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, tt.rules)
			if resp := post(t, t.Context(), srv, long); resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
		})
	}
}

package runner

import (
	"fmt"
	"strings"

	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tokens"
)

// A compaction keeps a session inside its model's window without
// deleting anything: it is a turn of the log (session.Compaction) that
// changes what later requests send. The prompt renders the history from
// the newest compaction on (view): the system prompt, the summary of the
// turns before its end, and the later turns whole, with the long tool
// results of older turns sent as stubs. A fork at a turn before the
// compaction copies no compaction turn, so it goes on uncompacted.

// view is what the newest compaction sends in place of the older turns.
type view struct {
	// base is the first turn sent whole; the turns before it are sent as
	// summary.
	base    int
	summary string
	// kept is the last user message before base, sent whole after the
	// summary when no user message followed it when the summary was
	// written: a request always holds the user's newest message.
	kept *session.UserTurn
	// The tool results of turns before pruneEnd longer than pruneOver
	// tokens (as estimated) are sent as stubs.
	pruneEnd  int
	pruneOver int64
}

// viewOf returns the view the newest compaction of turns sets, and that
// compaction's index (-1 when there is none).
func viewOf(turns []session.Turn) (view, int) {
	var v view
	at := -1
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Compaction != nil {
			at = i
			break
		}
	}
	if at < 0 {
		return v, at
	}
	newest := turns[at].Compaction
	v.pruneEnd, v.pruneOver = newest.PruneEnd, newest.PruneOver
	// The summary in force is the newest one, which may be older than a
	// compaction that only pruned.
	for i := at; i >= 0; i-- {
		if c := turns[i].Compaction; c != nil && c.Summary != "" {
			v.base, v.summary = c.SummaryEnd, c.Summary
			v.kept = keptUser(turns[:i], c.SummaryEnd)
			break
		}
	}
	return v, at
}

// keptUser is the last user message before end when no user message
// follows it in turns: it is sent whole after the summary.
func keptUser(turns []session.Turn, end int) *session.UserTurn {
	for i := len(turns) - 1; i >= 0; i-- {
		u := turns[i].User
		if u == nil || (u.Text == "" && len(u.Attachments) == 0 && len(u.Mail) == 0) {
			continue
		}
		if i >= end {
			return nil
		}
		return &session.UserTurn{Text: u.Text, Attachments: u.Attachments, Mail: u.Mail}
	}
	return nil
}

// summaryHeader opens the message that carries a summary.
const summaryHeader = "[Summary of the earlier conversation: the turns it covers are left out to save room]"

// header is what the view sends before the turns it sends whole.
func (v view) header(mailInToolResult bool) []llm.Message {
	if v.summary == "" {
		return nil
	}
	msgs := []llm.Message{llm.UserMessage(summaryHeader + "\n\n" + v.summary)}
	if v.kept != nil {
		msgs = appendTurn(msgs, session.Turn{User: v.kept}, mailInToolResult)
	}
	return msgs
}

// appendTurn renders a turn as the view sends it: pruned when it is old
// enough.
func (v view) appendTurn(msgs []llm.Message, t session.Turn, mailInToolResult bool) []llm.Message {
	if t.User != nil && t.Index < v.pruneEnd && len(t.User.ToolResults) > 0 {
		u := *t.User
		u.ToolResults = make([]session.ToolResult, len(t.User.ToolResults))
		for i, r := range t.User.ToolResults {
			if prunable(r, v.pruneOver) {
				r.Text = stub(r)
			}
			u.ToolResults[i] = r
		}
		t.User = &u
	}
	return appendTurn(msgs, t, mailInToolResult)
}

// prunable reports whether a tool result is long enough to be pruned. It
// is judged by the byte estimate, not the model's tokenizer, so the same
// history always renders the same way.
func prunable(r session.ToolResult, over int64) bool {
	return over > 0 && int64(tokens.Estimate(r.Text)) > over
}

// stub is what a pruned tool result is sent as.
func stub(r session.ToolResult) string {
	return fmt.Sprintf("[The result of %s is left out to save room: %d characters. The session's history keeps it whole.]", r.Name, len(r.Text))
}

// DefaultCompactionPrompt is the system prompt of a summary call, unless
// the agent sets its own.
var DefaultCompactionPrompt = []string{
	"You compact a conversation between a user and an AI assistant that uses tools, so that the assistant can go on with it without the full history.",
	"Write a summary that keeps everything the assistant needs to continue: the user's goals and requests, decisions made, facts learned (names, paths, identifiers, numbers, API names), the tools called and what they returned that still matters, the work done and the work still open, and every instruction from the user that still applies.",
	"Keep what still matters of an earlier summary. Write plain text, as short as it can be while losing nothing that matters. Do not answer the user and do not call tools: only summarise.",
}

// maxItemBytes bounds one entry of a summary's transcript: a longer
// text is cut in its middle. A small window bounds it lower (itemBytes).
const maxItemBytes = 6000

// itemBytes is the bound of a transcript's entry for a model's window.
func itemBytes(window int64) int {
	return int(min(maxItemBytes, max(400, window/2)))
}

// transcript renders turns for a summary call: one line per message,
// each led by who spoke, under the previous summary.
type transcript struct {
	b     strings.Builder
	limit int
}

func (tr *transcript) line(who, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if len(text) > tr.limit {
		half := tr.limit / 2
		text = fmt.Sprintf("%s\n[… %d characters left out …]\n%s", validPrefix(text, half), len(text)-2*half, validSuffix(text, half))
	}
	fmt.Fprintf(&tr.b, "[%s] %s\n", who, text)
}

func (tr *transcript) turn(t session.Turn) {
	switch {
	case t.User != nil:
		for _, r := range t.User.ToolResults {
			tr.line("tool "+r.Name, resultText(r))
		}
		text := joinNonEmpty(t.User.Text, renderMail(t.User.Mail))
		for _, att := range t.User.Attachments {
			text = joinNonEmpty(text, fmt.Sprintf("[attachment %s (%s), %d bytes]", att.Name, att.MediaType, len(att.Data)))
		}
		tr.line("user", text)
	case t.LLM != nil:
		tr.line("assistant", t.LLM.Text)
		for _, c := range t.LLM.ToolCalls {
			tr.line("assistant calls "+c.Name, c.Arguments)
		}
	}
}

// summaryRequest is the request of a summary call: the compaction prompt,
// then the transcript of what it folds, the previous summary first.
func summaryRequest(model string, prompt []string, prev string, turns []session.Turn, instruction string, itemLimit int) llm.Request {
	tr := transcript{limit: itemLimit}
	tr.line("summary", prev)
	for _, t := range turns {
		tr.turn(t)
	}
	var user strings.Builder
	user.WriteString("The conversation so far, to summarize:\n\n<transcript>\n")
	user.WriteString(tr.b.String())
	user.WriteString("</transcript>")
	if instruction != "" {
		user.WriteString("\n\nInstruction: " + instruction)
	}
	return llm.Request{Model: model, Messages: []llm.Message{
		llm.SystemMessage(strings.Join(prompt, "\n")),
		llm.UserMessage(user.String()),
	}}
}

// validPrefix and validSuffix cut s near n bytes without splitting a
// UTF-8 sequence.
func validPrefix(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func validSuffix(s string, n int) string {
	i := len(s) - n
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return s[i:]
}

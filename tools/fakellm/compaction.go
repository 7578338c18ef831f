package fakellm

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A compaction request asks the model to summarize a conversation so that
// the summary can replace it. Its prompt is the operator's to change, so
// the server recognizes the request by its shape alone: system (or
// developer) messages and exactly one user message holding the
// conversation between the markers below.
const (
	transcriptOpen    = "<transcript>"
	transcriptClose   = "</transcript>"
	instructionPrefix = "Instruction:"
)

// Summary limits. The summary must really be smaller than what it
// replaces, whatever the conversation, so every part is capped and the
// whole stays within maxSummaryRunes.
const (
	maxSummaryRunes     = 800
	maxQuoteRunes       = 60  // one user request or the assistant's last words
	maxEarlierRunes     = 100 // the previous summary's first sentence
	maxInstructionRunes = 150
	maxToolNames        = 5
	maxToolNameRunes    = 30
)

// IsCompaction reports whether r asks for a summary of a conversation: its
// messages are system or developer messages and exactly one user message,
// and that message contains "<transcript>" followed by "</transcript>".
func (r Request) IsCompaction() bool {
	_, ok := r.compactionText()
	return ok
}

// compactionText is the user message of a compaction request.
func (r Request) compactionText() (string, bool) {
	user, users := "", 0
	for _, m := range r.Messages {
		switch m.Role {
		case "system", "developer":
		case "user":
			user = m.Content
			users++
		default:
			return "", false
		}
	}
	if users != 1 {
		return "", false
	}
	open := strings.Index(user, transcriptOpen)
	if open < 0 || !strings.Contains(user[open+len(transcriptOpen):], transcriptClose) {
		return "", false
	}
	return user, true
}

// transcriptEntry is one message of a compaction request's transcript.
type transcriptEntry struct {
	kind string // "user", "assistant", "summary" or "tool"
	tool string // the tool's name, for kind "tool"
	text string
}

// parseTranscript splits the text between the markers into entries and
// reads the instruction that may follow the closing marker. A line that
// does not start with a known tag continues the entry before it, since a
// message may span lines.
func parseTranscript(user string) (entries []transcriptEntry, instruction string) {
	open := strings.Index(user, transcriptOpen)
	body := user[open+len(transcriptOpen):]
	closing := strings.Index(body, transcriptClose)
	body, after := body[:closing], body[closing+len(transcriptClose):]
	for line := range strings.Lines(body) {
		line = strings.TrimRight(line, "\r\n")
		if e, ok := parseEntryLine(line); ok {
			entries = append(entries, e)
			continue
		}
		if trimmed := strings.TrimSpace(line); trimmed != "" && len(entries) > 0 {
			last := &entries[len(entries)-1]
			last.text = strings.TrimSpace(last.text + " " + trimmed)
		}
	}
	for line := range strings.Lines(after) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), instructionPrefix); ok {
			instruction = strings.TrimSpace(rest)
			break
		}
	}
	return entries, instruction
}

func parseEntryLine(line string) (transcriptEntry, bool) {
	if !strings.HasPrefix(line, "[") {
		return transcriptEntry{}, false
	}
	end := strings.Index(line, "]")
	if end < 0 {
		return transcriptEntry{}, false
	}
	tag, text := line[1:end], strings.TrimSpace(line[end+1:])
	switch {
	case tag == "user" || tag == "assistant" || tag == "summary":
		return transcriptEntry{kind: tag, text: text}, true
	case strings.HasPrefix(tag, "tool "):
		return transcriptEntry{kind: "tool", tool: strings.TrimSpace(tag[len("tool "):]), text: text}, true
	}
	return transcriptEntry{}, false
}

// compactionSummary is the built-in answer to a compaction request, and ""
// for any other request. It is deterministic and at most maxSummaryRunes
// long: the number of messages, the previous summary's first sentence, the
// user's requests (the most recent ones when they do not all fit), the
// tools used, the assistant's last words, and the instruction, if any.
func compactionSummary(req Request) string {
	user, ok := req.compactionText()
	if !ok {
		return ""
	}
	entries, instruction := parseTranscript(user)

	var requests, tools []string
	toolUses := map[string]int{}
	var earlier, lastAssistant string
	for _, e := range entries {
		switch e.kind {
		case "user":
			requests = append(requests, quote(e.text, maxQuoteRunes))
		case "assistant":
			if e.text != "" {
				lastAssistant = e.text
			}
		case "summary":
			earlier = firstSentence(e.text)
		case "tool":
			if toolUses[e.tool] == 0 {
				tools = append(tools, e.tool)
			}
			toolUses[e.tool]++
		}
	}

	messages := "messages"
	if len(entries) == 1 {
		messages = "message"
	}
	head := fmt.Sprintf("Summary of the conversation so far (%d %s):", len(entries), messages)
	var before, after []string
	if earlier != "" {
		before = append(before, "earlier summary: "+quote(earlier, maxEarlierRunes))
	}
	if len(tools) > 0 {
		after = append(after, "tools used: "+toolList(tools, toolUses))
	}
	if lastAssistant != "" {
		after = append(after, "the assistant last said: "+quote(lastAssistant, maxQuoteRunes))
	}
	tail := "."
	if instruction != "" {
		tail = ". (kept: " + truncate(instruction, maxInstructionRunes) + ")"
	}

	// The user's requests get what the other parts leave, newest first:
	// the latest requests matter most to the conversation that continues.
	fixed := utf8.RuneCountInString(head+tail) + partsLen(before) + partsLen(after)
	budget := maxSummaryRunes - fixed - len(" the user asked: ; ") - len(" (999 earlier requests omitted)")
	kept := 0
	for i := len(requests) - 1; i >= 0; i-- {
		cost := utf8.RuneCountInString(requests[i]) + len("; ")
		if cost > budget {
			break
		}
		budget -= cost
		kept++
	}
	parts := before
	if len(requests) > 0 {
		// The latest request is kept even when over budget; the final cut
		// then shortens what follows it.
		kept = max(kept, 1)
		asked := "the user asked: " + strings.Join(requests[len(requests)-kept:], "; ")
		if omitted := len(requests) - kept; omitted > 0 {
			asked += fmt.Sprintf(" (%d earlier requests omitted)", omitted)
		}
		parts = append(parts, asked)
	}
	parts = append(parts, after...)
	if len(parts) == 0 {
		parts = append(parts, "nothing to keep")
	}
	// Every part is capped, so only a pathological mix reaches the cut;
	// it keeps the instruction, which the caller asked to see honoured.
	body := truncate(head+" "+strings.Join(parts, "; "), maxSummaryRunes-utf8.RuneCountInString(tail))
	return body + tail
}

// partsLen is the length of parts once joined by "; ", with the separator
// before the first.
func partsLen(parts []string) int {
	n := 0
	for _, p := range parts {
		n += utf8.RuneCountInString(p) + len("; ")
	}
	return n
}

func toolList(tools []string, uses map[string]int) string {
	var names []string
	for i, name := range tools {
		if i == maxToolNames {
			names = append(names, fmt.Sprintf("%d more", len(tools)-maxToolNames))
			break
		}
		entry := truncate(name, maxToolNameRunes)
		if n := uses[name]; n > 1 {
			entry += fmt.Sprintf(" (%d times)", n)
		}
		names = append(names, entry)
	}
	return strings.Join(names, ", ")
}

// quote is s on one line, cut to at most n runes, in double quotes.
func quote(s string, n int) string {
	return `"` + truncate(strings.Join(strings.Fields(s), " "), n) + `"`
}

// truncate cuts s to at most n runes, marking a cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:max(0, n-1)]) + "…"
}

// firstSentence is s up to the end of its first sentence: the first ". ",
// "! " or "? ", or the end of the first line.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	end := len(s)
	for _, stop := range []string{". ", "! ", "? "} {
		if i := strings.Index(s, stop); i >= 0 && i+1 < end {
			end = i + 1
		}
	}
	return strings.TrimSpace(s[:end])
}

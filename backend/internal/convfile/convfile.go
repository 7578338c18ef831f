// Package convfile reads the conversation files agents-exe writes
// (`conv.<uuid>.json`, and `*.session.json` where people keep them by
// name) and maps them to this server's model of sessions, so that old
// history can be imported.
//
// A file is one agents-exe Session, as its aeson instances write it:
//
//	{"sessionId": UUID, "forkedFromSessionId": UUID | null, "turnId": UUID,
//	 "sessionVersion": 1?, "turns": [Turn, …]}   (newest turn first)
//
// where a Turn is {"tag": "UserTurn" | "LlmTurn" | "PartialUserTurn",
// "contents": {…}, "byteUsage": {…}?}. A user turn holds the query
// (`userQuery`: a string, or {"text", "media"}), the system prompt and
// tools it was sent with (`userPrompt`, `userTools`, not kept: the agent
// a session runs gives its own) and the answers to the previous model
// turn's calls (`userToolResponses`: pairs [call, response]). A model
// turn holds `llmResponse` (`responseText`, `responseThinking`, the
// provider's `rawResponse` and `responseTokenUsage`) and `llmToolCalls`
// (OpenAI-shaped calls). A partial user turn is what an asynchronous run
// left when it was saved: the answers it had and the calls still pending.
//
// Nothing in the file names the agent that held the conversation; the
// importer says which agent the session gets.
package convfile

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/agents-os/agents/backend/internal/jsoncheck"
	"github.com/agents-os/agents/backend/internal/session"
)

// Conversation is one agents-exe session in this server's model.
type Conversation struct {
	// SessionID is the session's id in agents-exe, in canonical form.
	SessionID string `json:"session_id"`
	// ForkedFrom is the id of the session it was forked from, "" if none.
	ForkedFrom string `json:"forked_from,omitempty"`
	// Turns are its turns, oldest first and indexed from 0; their
	// creation times are zero (agents-exe does not record them).
	Turns []session.Turn `json:"turns"`
}

// Error is why a file is not an agents-exe conversation.
type Error struct {
	// Path is where in the file the problem is ("turns[3].contents"),
	// "" for the file as a whole. Turns are counted as the file lists
	// them, newest first.
	Path    string
	Problem string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// IsConversationFile reports whether a file's name is one agents-exe
// gives a conversation (conv.<uuid>.json) or one people keep them under
// (NAME.session.json): the files a directory import picks up.
func IsConversationFile(name string) bool {
	base := filepath.Base(name)
	if strings.HasSuffix(base, ".session.json") && len(base) > len(".session.json") {
		return true
	}
	id, ok := strings.CutPrefix(base, "conv.")
	if !ok {
		return false
	}
	id, ok = strings.CutSuffix(id, ".json")
	return ok && uuid.Validate(id) == nil
}

// Texts of the tool results that agents-exe did not record: the import
// gives every call a result, so the history can be continued.
const (
	noResultText = "no result: the conversation was saved before this call returned"
	pendingText  = "no result: the call was still pending when the conversation was saved"
)

// Decode reads one conversation file. Errors are *Error.
func Decode(data []byte) (*Conversation, error) {
	if !utf8.Valid(data) {
		return nil, &Error{Problem: "the file is not UTF-8 text"}
	}
	var deep *jsoncheck.DepthError
	if errors.As(jsoncheck.Depth(data, jsoncheck.MaxDepth), &deep) {
		return nil, &Error{Problem: deep.Error()}
	}
	v, err := parse(data)
	if err != nil {
		return nil, err
	}
	root := node{v: v}
	if _, ok := v.(map[string]any); !ok {
		return nil, &Error{Problem: fmt.Sprintf("want a JSON object (an agents-exe session), got %s", kindOf(v))}
	}
	c := &Conversation{}
	if c.SessionID, err = sessionID(root.get("sessionId"), false); err != nil {
		return nil, err
	}
	if c.ForkedFrom, err = sessionID(root.get("forkedFromSessionId"), true); err != nil {
		return nil, err
	}
	list, err := root.get("turns").list(false)
	if err != nil {
		return nil, err
	}
	// The file lists the newest turn first; sessions here go oldest first.
	for i := len(list) - 1; i >= 0; i-- {
		t, err := turn(list[i])
		if err != nil {
			return nil, err
		}
		c.Turns = append(c.Turns, t)
	}
	c.Turns = answerEveryCall(c.Turns)
	for i := range c.Turns {
		c.Turns[i].Index = i
	}
	return c, nil
}

func sessionID(n node, optional bool) (string, error) {
	if optional && n.missing() {
		return "", nil
	}
	s, err := n.str()
	if err != nil {
		return "", n.want("a session id (a UUID)")
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return "", n.fail("%q is not a UUID", s)
	}
	return id.String(), nil
}

func turn(n node) (session.Turn, error) {
	if _, err := n.object(); err != nil {
		return session.Turn{}, err
	}
	tag, err := n.get("tag").str()
	if err != nil {
		return session.Turn{}, err
	}
	contents, err := n.get("contents").object()
	if err != nil {
		return session.Turn{}, err
	}
	switch tag {
	// The _v0 tags are the encoding of turns from before byte usage
	// was recorded, which agents-exe still reads.
	case "UserTurn", "UserTurn_v0":
		u, err := userTurn(contents)
		return session.Turn{User: u}, err
	case "LlmTurn", "LlmTurn_v0":
		l, err := llmTurn(contents, n.get("byteUsage"))
		return session.Turn{LLM: l}, err
	case "PartialUserTurn":
		u, err := partialTurn(contents)
		return session.Turn{User: u}, err
	}
	return session.Turn{}, n.get("tag").fail("unknown turn %q (want UserTurn, LlmTurn or PartialUserTurn)", tag)
}

func userTurn(c node) (*session.UserTurn, error) {
	u, err := query(c.get("userQuery"))
	if err != nil {
		return nil, err
	}
	pairs, err := c.get("userToolResponses").list(true)
	if err != nil {
		return nil, err
	}
	u.ToolResults, err = results(pairs)
	return u, err
}

// partialTurn is the user turn of an asynchronous round saved before
// every call returned: the calls still pending get a result saying so.
func partialTurn(c node) (*session.UserTurn, error) {
	u, err := query(c.get("userQuery"))
	if err != nil {
		return nil, err
	}
	done, err := c.get("completedResponses").list(true)
	if err != nil {
		return nil, err
	}
	if u.ToolResults, err = results(done); err != nil {
		return nil, err
	}
	pending, err := c.get("pendingCalls").list(true)
	if err != nil {
		return nil, err
	}
	for _, p := range pending {
		call, err := toolCall(p)
		if err != nil {
			return nil, err
		}
		u.ToolResults = append(u.ToolResults, session.ToolResult{CallID: call.ID, Name: call.Name, Text: pendingText, Status: session.ResultCancelled})
	}
	return u, nil
}

// query is a user query: absent or null, the text alone (as agents-exe
// wrote it before media), or {"text", "media": [attachment]}.
func query(n node) (*session.UserTurn, error) {
	u := &session.UserTurn{}
	switch v := n.v.(type) {
	case nil:
	case string:
		u.Text = v
	case map[string]any:
		var err error
		if u.Text, err = n.get("text").str(); err != nil {
			return nil, err
		}
		media, err := n.get("media").list(true)
		if err != nil {
			return nil, err
		}
		for i, m := range media {
			a, err := attachment(m, i)
			if err != nil {
				return nil, err
			}
			u.Attachments = append(u.Attachments, a)
		}
	default:
		return nil, n.want("a string, an object or null")
	}
	return u, nil
}

// attachment is a media attachment: {"mimeType", "base64Data",
// "filename"?}.
func attachment(n node, i int) (session.Attachment, error) {
	if _, err := n.object(); err != nil {
		return session.Attachment{}, err
	}
	mime, err := n.get("mimeType").str()
	if err != nil {
		return session.Attachment{}, err
	}
	encoded, err := n.get("base64Data").str()
	if err != nil {
		return session.Attachment{}, err
	}
	data, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return session.Attachment{}, n.get("base64Data").fail("not base64: %v", err)
	}
	name, err := n.get("filename").optString()
	if err != nil {
		return session.Attachment{}, err
	}
	if name == "" {
		name = fmt.Sprintf("attachment-%d", i+1)
	}
	return session.Attachment{Name: name, MediaType: mime, Data: data}, nil
}

// results reads [call, response] pairs.
func results(pairs []node) ([]session.ToolResult, error) {
	var out []session.ToolResult
	for _, p := range pairs {
		pair, err := p.list(false)
		if err != nil {
			return nil, err
		}
		if len(pair) != 2 {
			return nil, p.fail("want a pair [call, response], got a list of %d", len(pair))
		}
		call, err := toolCall(pair[0])
		if err != nil {
			return nil, err
		}
		text, err := responseText(pair[1])
		if err != nil {
			return nil, err
		}
		out = append(out, session.ToolResult{CallID: call.ID, Name: call.Name, Text: text, Status: session.ResultOK})
	}
	return out, nil
}

// toolCall reads a call as the model gave it (OpenAI's shape):
// {"id", "type": "function", "function": {"name", "arguments"}}.
func toolCall(n node) (session.ToolCall, error) {
	if _, err := n.object(); err != nil {
		return session.ToolCall{}, err
	}
	id, err := n.get("id").str()
	if err != nil {
		return session.ToolCall{}, err
	}
	fn, err := n.get("function").object()
	if err != nil {
		return session.ToolCall{}, err
	}
	name, err := fn.get("name").str()
	if err != nil {
		return session.ToolCall{}, err
	}
	args := "{}"
	switch a := fn.get("arguments"); v := a.v.(type) {
	case nil:
	case string:
		args = v
	default:
		// Some providers give the arguments as an object, not its text.
		if args, err = a.compact(); err != nil {
			return session.ToolCall{}, err
		}
	}
	return session.ToolCall{ID: id, Name: name, Arguments: args, Mode: session.CallAttached}, nil
}

// responseText is the text a tool response gave the model. agents-exe
// writes {"type": "text" | "json" | "media" | "mixed", …}; what it wrote
// before (and reads still) is any JSON value, possibly wrapped in
// {"_userToolResponse": …}: a string is the text, anything else its JSON.
func responseText(n node) (string, error) {
	obj, ok := n.v.(map[string]any)
	if !ok {
		return legacyText(n)
	}
	if _, ok := obj["_userToolResponse"]; ok {
		return legacyText(n.get("_userToolResponse"))
	}
	typ, _ := obj["type"].(string)
	content := n.get("content")
	switch typ {
	case "text":
		if s, ok := content.v.(string); ok {
			return s, nil
		}
	case "json":
		if !content.absent {
			return content.compact()
		}
	case "media":
		if text, ok := mediaText(n); ok {
			return text, nil
		}
	case "mixed":
		if text, ok := mixedText(n.get("parts")); ok {
			return text, nil
		}
	}
	// Not the tagged shape after all: agents-exe reads it as plain JSON.
	return n.compact()
}

func legacyText(n node) (string, error) {
	if s, ok := n.v.(string); ok {
		return s, nil
	}
	return n.compact()
}

// mediaText stands for a media response, whose bytes a tool result (text)
// cannot carry: what it was, and how big.
func mediaText(n node) (string, bool) {
	mime, ok1 := n.get("mimeType").v.(string)
	data, ok2 := n.get("base64Data").v.(string)
	if !ok1 || !ok2 {
		return "", false
	}
	size := base64.StdEncoding.DecodedLen(len(data)) - strings.Count(data[max(0, len(data)-2):], "=")
	what := mime
	if name, ok := n.get("filename").v.(string); ok && name != "" {
		what = name + ", " + mime
	}
	return fmt.Sprintf("[media: %s, %d bytes]", what, size), true
}

func mixedText(n node) (string, bool) {
	parts, err := n.list(false)
	if err != nil {
		return "", false
	}
	var texts []string
	for _, p := range parts {
		switch typ, _ := p.get("type").v.(string); typ {
		case "text":
			s, ok := p.get("text").v.(string)
			if !ok {
				return "", false
			}
			texts = append(texts, s)
		case "media":
			s, ok := mediaText(p)
			if !ok {
				return "", false
			}
			texts = append(texts, s)
		default:
			return "", false
		}
	}
	return strings.Join(texts, "\n"), true
}

func llmTurn(c node, byteUsage node) (*session.LLMTurn, error) {
	rsp, err := c.get("llmResponse").object()
	if err != nil {
		return nil, err
	}
	l := &session.LLMTurn{}
	if l.Text, err = rsp.get("responseText").optString(); err != nil {
		return nil, err
	}
	if l.Thinking, err = rsp.get("responseThinking").optString(); err != nil {
		return nil, err
	}
	raw := rsp.get("rawResponse")
	l.Model, _ = raw.get("model").v.(string)
	if choices, ok := raw.get("choices").v.([]any); ok && len(choices) > 0 {
		if first, ok := choices[0].(map[string]any); ok {
			l.FinishReason, _ = first["finish_reason"].(string)
		}
	}
	// The turn's own usage, else the step's, else the provider's raw
	// answer's (files that recorded neither keep it there only).
	usage := rsp.get("responseTokenUsage")
	if usage.missing() {
		usage = byteUsage.get("stepTokenUsage")
	}
	if u := raw.get("usage"); usage.missing() && !u.missing() {
		if _, err := u.object(); err == nil {
			// A provider's answer is not the file's own record: a usage
			// of another shape there is left out, not refused.
			usage = u
		}
	}
	if l.Usage, err = tokens(usage); err != nil {
		return nil, err
	}
	calls, err := c.get("llmToolCalls").list(true)
	if err != nil {
		return nil, err
	}
	for _, cn := range calls {
		call, err := toolCall(cn)
		if err != nil {
			return nil, err
		}
		l.ToolCalls = append(l.ToolCalls, call)
	}
	return l, nil
}

// tokens reads a provider's usage object under the names agents-exe
// knows: OpenAI's, Kimi's and Mistral's (prompt_tokens, …) and Claude's
// (input_tokens, …).
func tokens(n node) (session.Usage, error) {
	if n.missing() {
		return session.Usage{}, nil
	}
	if _, err := n.object(); err != nil {
		return session.Usage{}, err
	}
	var u session.Usage
	var err error
	first := func(dst *int64, candidates ...node) {
		for _, c := range candidates {
			if err != nil || c.missing() {
				continue
			}
			*dst, err = c.count()
			return
		}
	}
	first(&u.Prompt, n.get("prompt_tokens"), n.get("input_tokens"))
	first(&u.Completion, n.get("completion_tokens"), n.get("output_tokens"))
	first(&u.Cached, n.get("cached_tokens"), n.get("prompt_tokens_details").get("cached_tokens"))
	first(&u.Reasoning, n.get("reasoning_tokens"), n.get("thinking_tokens"), n.get("completion_tokens_details").get("reasoning_tokens"))
	return u, err
}

// answerEveryCall gives every call of a model turn a result in the turn
// after it, as a session here needs before the model is asked again: a
// call agents-exe saved no answer to gets one saying so (in a user turn
// of its own when the model turn is the last one, or another model turn
// follows).
func answerEveryCall(turns []session.Turn) []session.Turn {
	var out []session.Turn
	for i, t := range turns {
		out = append(out, t)
		if t.LLM == nil || len(t.LLM.ToolCalls) == 0 {
			continue
		}
		if i+1 < len(turns) && turns[i+1].User != nil {
			next := turns[i+1].User
			have := make(map[string]bool, len(next.ToolResults))
			for _, r := range next.ToolResults {
				have[r.CallID] = true
			}
			for _, c := range t.LLM.ToolCalls {
				if !have[c.ID] {
					next.ToolResults = append(next.ToolResults, session.ToolResult{CallID: c.ID, Name: c.Name, Text: noResultText, Status: session.ResultCancelled})
				}
			}
			continue
		}
		u := &session.UserTurn{}
		for _, c := range t.LLM.ToolCalls {
			u.ToolResults = append(u.ToolResults, session.ToolResult{CallID: c.ID, Name: c.Name, Text: noResultText, Status: session.ResultCancelled})
		}
		out = append(out, session.Turn{User: u})
	}
	return out
}

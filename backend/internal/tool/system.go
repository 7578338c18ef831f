package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agents-os/agents/backend/internal/export"
	"github.com/agents-os/agents/backend/internal/session"
)

// The operating system tools: an agent's window on the system it runs
// in, offered only to agents whose file asks for them ("osTools"). Each
// is os_<name>, name as the agent file writes it.
const (
	SystemPrefix        = "os_"
	SendMailName        = SystemPrefix + "send_mail"
	SpawnSessionName    = SystemPrefix + "spawn_session"
	WatchSessionName    = SystemPrefix + "watch_session"
	ListSubSessionsName = SystemPrefix + "list_sub_sessions"
	ReadSessionName     = SystemPrefix + "read_session"
)

// Bounds of os_read_session: a model reads a session's tail, not a
// history that could outgrow its context.
const (
	defaultReadTurns = 20
	maxReadTurns     = 200
	maxReadChars     = 32 << 10
)

// System returns the operating system tool the agent file calls name
// (send_mail, spawn_session, …), false when there is none.
func System(name string) (Tool, bool) {
	switch SystemPrefix + name {
	case SendMailName:
		return &system{spec: systemSpec(SendMailName,
			"Send a message to another session of the same owner; it reaches that session's agent at its next step, or wakes it when idle.",
			`{"type":"object","properties":{"session_id":{"type":"string","description":"The recipient session id."},"text":{"type":"string","description":"The message."},"urgent":{"type":"boolean","description":"Interrupt the recipient's current step."}},"required":["session_id","text"],"additionalProperties":false}`),
			run: sendMail}, true
	case SpawnSessionName:
		return &system{spec: systemSpec(SpawnSessionName,
			"Start a session of an agent as a sub-session of this one, with a first message; returns its id. With wait, returns its answer once its run stops.",
			`{"type":"object","properties":{"agent":{"type":"string","description":"The agent's slug."},"prompt":{"type":"string","description":"The first message."},"title":{"type":"string","description":"A title for the session."},"wait":{"type":"boolean","description":"Wait for the session's answer."}},"required":["agent","prompt"],"additionalProperties":false}`),
			run: spawnSession}, true
	case WatchSessionName:
		return &system{spec: systemSpec(WatchSessionName,
			"Watch another session: when its run stops or fails you receive a message saying so.",
			`{"type":"object","properties":{"session_id":{"type":"string","description":"The session to watch."},"ttl_seconds":{"type":"integer","description":"How long to watch; one hour when omitted."}},"required":["session_id"],"additionalProperties":false}`),
			run: watchSession}, true
	case ListSubSessionsName:
		return &system{spec: systemSpec(ListSubSessionsName,
			"List the sub-sessions (helper agent runs and spawned sessions) this session started, with their status.",
			`{"type":"object","properties":{},"additionalProperties":false}`),
			run: listSubSessions}, true
	case ReadSessionName:
		return &system{spec: systemSpec(ReadSessionName,
			fmt.Sprintf("Read a session of the same owner as text: its last turns (%d unless told), at most %d characters.", defaultReadTurns, maxReadChars),
			fmt.Sprintf(`{"type":"object","properties":{"session_id":{"type":"string","description":"The session to read."},"last_turns":{"type":"integer","description":"How many of its last turns, at most %d."}},"required":["session_id"],"additionalProperties":false}`, maxReadTurns)),
			run: readSession}, true
	}
	return nil, false
}

func systemSpec(name, description, schema string) Spec {
	return Spec{Name: name, Description: description, Parameters: json.RawMessage(schema), Kind: session.ToolSystem, Source: "system"}
}

// system is one system tool: its calls act as the calling session,
// within its owner, through the host. Its schema is closed, so the
// arguments it reads (call.Args) are the ones it declares, spelt as it
// declares them.
type system struct {
	spec Spec
	run  func(ctx context.Context, call Call) Result
}

func (s *system) Spec() Spec             { return s.spec }
func (s *system) Mode() session.CallMode { return session.CallAttached }

func (s *system) Execute(ctx context.Context, call Call) Result { return s.run(ctx, call) }

func sendMail(ctx context.Context, call Call) Result {
	to, text := call.Args.String("session_id"), call.Args.String("text")
	if to == "" || text == "" {
		return Failed(`send_mail needs {"session_id": "…", "text": "…"}`)
	}
	id, err := call.Host.SendMail(ctx, to, text, call.Args.Bool("urgent"))
	if err != nil {
		return Failed(err.Error())
	}
	return OK("mail " + id + " delivered to session " + to)
}

func spawnSession(ctx context.Context, call Call) Result {
	req := SpawnRequest{Agent: call.Args.String("agent"), Prompt: call.Args.String("prompt"), Title: call.Args.String("title"), Wait: call.Args.Bool("wait")}
	if req.Agent == "" || req.Prompt == "" {
		return Failed(`spawn_session needs {"agent": "…", "prompt": "…"}`)
	}
	s, err := call.Host.Spawn(ctx, req)
	if err != nil {
		return Failed(err.Error())
	}
	if !req.Wait {
		return OK("started session " + s.ID + " of agent " + req.Agent)
	}
	if s.Answer == "" {
		reason := s.Status
		if s.Reason != "" {
			reason += ": " + s.Reason
		}
		return Failed(fmt.Sprintf("session %s of agent %s did not answer (%s)", s.ID, req.Agent, reason))
	}
	return OK(fmt.Sprintf("session %s of agent %s answered:\n\n%s", s.ID, req.Agent, s.Answer))
}

func listSubSessions(ctx context.Context, call Call) Result {
	rows, err := call.Host.SubSessions(ctx)
	if err != nil {
		return Failed(err.Error())
	}
	if rows == nil {
		rows = []SubSession{}
	}
	b, _ := json.Marshal(rows)
	return OK(string(b))
}

func watchSession(ctx context.Context, call Call) Result {
	target := call.Args.String("session_id")
	if target == "" {
		return Failed(`watch_session needs {"session_id": "…"}`)
	}
	until, err := call.Host.Watch(ctx, target, seconds(call.Args.Int("ttl_seconds")))
	if err != nil {
		return Failed(err.Error())
	}
	return OK(fmt.Sprintf("watching session %s until %s", target, until.Format(time.RFC3339)))
}

// seconds is a count of seconds as a duration, saturated rather than
// wrapped around.
func seconds(n int64) time.Duration {
	const most = math.MaxInt64 / int64(time.Second)
	return time.Duration(max(-most, min(n, most))) * time.Second
}

func readSession(ctx context.Context, call Call) Result {
	target := call.Args.String("session_id")
	if target == "" {
		return Failed(`read_session needs {"session_id": "…"}`)
	}
	last := call.Args.Int("last_turns")
	switch {
	case last <= 0:
		last = defaultReadTurns
	case last > maxReadTurns:
		last = maxReadTurns
	}
	meta, turns, err := call.Host.ReadSession(ctx, target, int(last))
	if err != nil {
		return Failed(err.Error())
	}
	text := export.Markdown(meta, turns)
	if omitted := meta.TurnCount - len(turns); omitted > 0 {
		text = fmt.Sprintf("[%d earlier turns not shown]\n\n", omitted) + text
	}
	if len(text) > maxReadChars {
		text = fmt.Sprintf("[the beginning is cut: the session is longer than %d characters]\n\n", maxReadChars) + tailOf(text, maxReadChars)
	}
	return OK(text)
}

// tailOf returns the end of text, at most n bytes of it: the newest part
// is what a reader wants. It starts on a line boundary when the tail holds
// one with text after it; when one line fills the tail, it keeps the end
// of that line from a character boundary, marked as cut with "…", so the
// reader never gets nothing.
func tailOf(text string, n int) string {
	tail := text[len(text)-n:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 && strings.TrimSpace(tail[i+1:]) != "" {
		return tail[i+1:]
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return "…" + tail
}

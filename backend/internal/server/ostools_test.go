package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/tools/fakellm"
)

// osCall is a boss's first step: one call of an operating system tool
// whose arguments name the boss's message ({{last_user}}).
func osCall(name, args string) fakellm.Rule {
	return fakellm.Rule{Times: 1, Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: steps(0)}, Reply: fakellm.Reply{
		ToolCalls: []fakellm.ToolCall{{Name: name, Arguments: json.RawMessage(args)}},
	}}
}

// Issue 12, item 5: each operating system tool through the runner, and
// the owner check of each that names a session: another owner's session
// is, to a tool, one that does not exist. Each boss session runs one
// call, in the order of the rules (each used once).
func TestTheOSToolsActWithinTheCallersOwner(t *testing.T) {
	t.Parallel()
	yes := true
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: "helper heard: {{last_user}}"}},
		osCall("os_read_session", `{"session_id": "{{last_user}}"}`),
		osCall("os_read_session", `{"session_id": "{{last_user}}"}`),
		osCall("os_watch_session", `{"session_id": "{{last_user}}"}`),
		osCall("os_send_mail", `{"session_id": "{{last_user}}", "text": "psst"}`),
		osCall("os_watch_session", `{"session_id": "{{last_user}}", "ttl_seconds": 60}`),
		osCall("os_send_mail", `{"session_id": "{{last_user}}", "text": "psst"}`),
		osCall("os_spawn_session", `{"agent": "helper", "prompt": "{{last_user}}", "wait": true}`),
		{Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: steps(1), ToolResultContains: "answered:"}, Reply: fakellm.Reply{
			ToolCalls: []fakellm.ToolCall{{Name: "os_list_sub_sessions", Arguments: json.RawMessage(`{}`)}},
		}},
		{Match: fakellm.Match{SystemContains: bossPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "done"}},
	}, Default: &fakellm.Reply{Text: "ok"}})

	peer := e.wait(e.create("helper", "hello peer").GetMeta().GetId()).GetMeta().GetId()
	stranger, err := e.runner.CreateSession(context.Background(), "stranger", runner.CreateRequest{Agent: "helper", Message: &runner.Message{Text: "the stranger's business"}})
	if err != nil {
		t.Fatal(err)
	}
	strangerID := stranger.Meta.ID
	// The stranger's session is no session of the client's owner: it is
	// waited for through the runner.
	waitStranger := func() runner.View {
		t.Helper()
		v, err := e.runner.GetSession(context.Background(), runner.AnyOwner, strangerID, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	waitStranger()

	// call runs a boss whose message is text and returns its results.
	call := func(text string) (*agentsv1.Session, []*agentsv1.ToolResult) {
		t.Helper()
		s := e.wait(e.create("boss", text).GetMeta().GetId())
		if len(s.GetTurns()) < 3 {
			t.Fatalf("boss turns = %d, want its call and result", len(s.GetTurns()))
		}
		return s, s.GetTurns()[2].GetUser().GetToolResults()
	}
	ok := agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK
	failed := agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR
	expect := func(what string, res []*agentsv1.ToolResult, status agentsv1.ToolResultStatus, part string) {
		t.Helper()
		if len(res) != 1 || res[0].GetStatus() != status || !strings.Contains(res[0].GetText(), part) {
			t.Errorf("%s: results %v, want one %v holding %q", what, res, status, part)
		}
	}

	_, res := call(peer)
	expect("read_session of a session of the owner", res, ok, "helper heard: hello peer")
	_, res = call(strangerID)
	expect("read_session of another owner's session", res, failed, "unknown session")
	if strings.Contains(res[0].GetText(), "stranger's business") {
		t.Errorf("read_session leaked another owner's session: %q", res[0].GetText())
	}
	_, res = call(strangerID)
	expect("watch_session of another owner's session", res, failed, "unknown session")
	_, res = call(strangerID)
	expect("send_mail to another owner's session", res, failed, "unknown session")
	if v := waitStranger(); v.Meta.PendingMail != 0 || len(v.Turns) != 2 {
		t.Errorf("the stranger's session got mail: %d pending, %d turns", v.Meta.PendingMail, len(v.Turns))
	}

	watcher, res := call(peer)
	expect("watch_session of a session of the owner", res, ok, "watching session "+peer)
	feed := e.openSSE("/v1/events")
	_, res = call(peer)
	expect("send_mail to a session of the owner", res, ok, "delivered to session "+peer)
	until(t, feed, kind(peer, "run.stopped"))
	if got := lastTurn(e.wait(peer)).GetLlm().GetText(); !strings.Contains(got, "psst") {
		t.Errorf("peer's answer to the mail = %q, want it to have read the mail", got)
	}
	until(t, feed, kind(watcher.GetMeta().GetId(), "run.stopped"))
	w := e.wait(watcher.GetMeta().GetId())
	if mail := lastUserMail(w); !strings.Contains(mail, peer) {
		t.Errorf("the watcher's last mail = %q, want a word about %s", mail, peer)
	}

	spawner, res := call("spawn me")
	expect("spawn_session", res, ok, "answered:\n\nhelper heard: spawn me")
	kids := children(t, e, spawner.GetMeta().GetId())
	if len(kids) != 1 || kids[0].GetAgent() != "helper" || kids[0].GetOwner() != spawner.GetMeta().GetOwner() {
		t.Fatalf("the spawner's children = %v, want one helper session of its owner", kids)
	}
	listed := spawner.GetTurns()[4].GetUser().GetToolResults()
	expect("list_sub_sessions", listed, ok, `"id":"`+kids[0].GetId()+`"`)
}

// lastUserMail is the text of the mail folded into a session's turns,
// newest last.
func lastUserMail(s *agentsv1.Session) string {
	var text string
	for _, turn := range s.GetTurns() {
		for _, m := range turn.GetUser().GetMail() {
			text = m.GetBody().GetAgentMessage().GetText()
		}
	}
	return text
}

func children(t *testing.T, e *env, id string) []*agentsv1.SessionMeta {
	t.Helper()
	res, err := e.sessions.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{ParentId: id}))
	if err != nil {
		t.Fatal(err)
	}
	return res.Msg.GetSessions()
}

// An agent whose file does not ask for osTools is offered none of them,
// neither in its descriptor nor to its model; one that asks is offered
// each.
func TestOnlyAgentsThatAskAreOfferedTheOSTools(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	e.wait(e.create("helper", "hi").GetMeta().GetId())
	e.wait(e.create("boss", "hi").GetMeta().GetId())
	for _, r := range requestsOf(e, helperPrompt) {
		for _, tl := range r.Tools {
			if strings.HasPrefix(tl.Name, "os_") {
				t.Errorf("the helper's model was offered %s", tl.Name)
			}
		}
	}
	boss := requestsOf(e, bossPrompt)
	if len(boss) == 0 {
		t.Fatal("no model request of the boss")
	}
	for _, name := range []string{"os_send_mail", "os_spawn_session", "os_watch_session", "os_list_sub_sessions", "os_read_session"} {
		if _, ok := toolNamed(boss[0], name); !ok {
			t.Errorf("the boss (osTools: true) was not offered %s", name)
		}
	}
	for slug, want := range map[string]bool{"helper": false, "boss": true} {
		res, err := e.agents.GetAgent(ctxFor(t), connect.NewRequest(&agentsv1.GetAgentRequest{Slug: slug}))
		if err != nil {
			t.Fatal(err)
		}
		has := false
		for _, tl := range res.Msg.GetAgent().GetTools() {
			has = has || strings.HasPrefix(tl.GetName(), "os_")
		}
		if has != want {
			t.Errorf("descriptor of %s shows operating system tools: %v, want %v", slug, has, want)
		}
	}
}

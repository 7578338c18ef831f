package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/store/storefault"
	"github.com/agents-os/agents/tools/fakellm"
)

// keyed sends a JSON request with an Idempotency-Key, expects status
// want, and decodes the answer into out.
func (e *env) keyed(method, path, body, key string, want int, out proto.Message) {
	e.t.Helper()
	status, _, b := e.do(method, path, body, "Idempotency-Key", key)
	if status != want {
		e.t.Fatalf("%s %s with key %s = %d %s, want %d", method, path, key, status, b, want)
	}
	if out != nil {
		if err := readAnswer(b, out); err != nil {
			e.t.Fatalf("%s %s answered %s: %v", method, path, b, err)
		}
	}
}

func (e *env) countSessions() int {
	e.t.Helper()
	res, err := e.sessions.ListSessions(ctxFor(e.t), connect.NewRequest(&agentsv1.ListSessionsRequest{}))
	if err != nil {
		e.t.Fatal(err)
	}
	return len(res.Msg.GetSessions())
}

func (e *env) mailOf(id string) []*agentsv1.MailEnvelope {
	e.t.Helper()
	res, err := e.sessions.ListMail(ctxFor(e.t), connect.NewRequest(&agentsv1.ListMailRequest{SessionId: id}))
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Msg.GetMail()
}

// Issue 8, item 6: a client that retries a create after a timeout gets
// the session the first request made, not a second one, over JSON (the
// Idempotency-Key header) and over Connect (the request's field), one
// retry after the other or all at once.
func TestARetriedCreateWithItsKeyMakesOneSession(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "hello back"}})
	const body = `{"agent": "helper", "message": {"text": "hi"}}`
	first, again := &agentsv1.CreateSessionResponse{}, &agentsv1.CreateSessionResponse{}
	e.keyed(http.MethodPost, "/v1/sessions", body, "create-1", http.StatusCreated, first)
	id := first.GetSession().GetMeta().GetId()
	e.wait(id)
	e.keyed(http.MethodPost, "/v1/sessions", body, "create-1", http.StatusCreated, again)
	if got := again.GetSession().GetMeta().GetId(); got != id {
		t.Fatalf("the retry made session %s, want the first one, %s", got, id)
	}
	if n := len(again.GetSession().GetTurns()); n != 2 {
		t.Errorf("the retry's session has %d turns, want 2 (the message once, its answer)", n)
	}

	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Go(func() {
			res, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
				Agent: "helper", Message: &agentsv1.Message{Text: "hi"}, IdempotencyKey: "create-2",
			}))
			if err != nil {
				t.Errorf("concurrent create %d: %v", i, err)
				return
			}
			ids[i] = res.Msg.GetSession().GetMeta().GetId()
		})
	}
	wg.Wait()
	for _, got := range ids {
		if got != ids[0] {
			t.Fatalf("concurrent creates with one key made sessions %v, want one", ids)
		}
	}
	if n := e.countSessions(); n != 2 {
		t.Errorf("sessions = %d, want 2 (one per key)", n)
	}
	// The second session's run has asked the model once it ended.
	e.wait(ids[0])
	if n := len(e.model.Requests()); n != 2 {
		t.Errorf("model requests = %d, want 2: a retry must not run again", n)
	}
}

// Issue 8, item 6: a retried message is one user turn (or one mail, when
// it came during a run), and the retry gets the first answer.
func TestARetriedMessageWithItsKeyIsPostedOnce(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{UserContains: "slowly"}, Reply: fakellm.Reply{Text: slowText, ChunkSize: 4, ChunkDelay: "20ms"}},
		{Reply: fakellm.Reply{Text: "ok"}},
	}})
	feed := e.openSSE("/v1/events")
	id := e.create("helper", "hi").GetMeta().GetId()
	e.wait(id)
	path := "/v1/sessions/" + id + "/messages"

	first, again := &agentsv1.PostMessageResponse{}, &agentsv1.PostMessageResponse{}
	e.keyed(http.MethodPost, path, `{"text": "answer slowly"}`, "post-1", http.StatusOK, first)
	if first.GetMeta().GetStatus() != running || first.GetMailId() != "" {
		t.Fatalf("first post = %v, want a run", first)
	}
	// Retried while its run goes on: not mail, not a second turn.
	e.keyed(http.MethodPost, path, `{"text": "answer slowly"}`, "post-1", http.StatusOK, again)
	if again.GetMailId() != "" {
		t.Fatalf("the retry became mail %s", again.GetMailId())
	}

	// A message posted during the run is mail; its retry is the same mail.
	until(t, feed, kind(id, "text.delta"))
	mail, mailAgain := &agentsv1.PostMessageResponse{}, &agentsv1.PostMessageResponse{}
	e.keyed(http.MethodPost, path, `{"text": "and this"}`, "post-2", http.StatusOK, mail)
	e.keyed(http.MethodPost, path, `{"text": "and this"}`, "post-2", http.StatusOK, mailAgain)
	if mail.GetMailId() == "" || mailAgain.GetMailId() != mail.GetMailId() {
		t.Fatalf("mail ids = %q then %q, want one mail", mail.GetMailId(), mailAgain.GetMailId())
	}

	s := e.wait(id)
	var texts []string
	for _, turn := range s.GetTurns() {
		if u := turn.GetUser(); u != nil {
			texts = append(texts, u.GetText())
			for _, m := range u.GetMail() {
				texts = append(texts, "mail: "+m.GetBody().GetUserMessage().GetText())
			}
		}
	}
	want := []string{"hi", "answer slowly", "", "mail: and this"}
	if len(texts) != len(want) {
		t.Fatalf("user turns = %q, want %q", texts, want)
	}
	for i := range want {
		if texts[i] != want[i] {
			t.Fatalf("user turns = %q, want %q", texts, want)
		}
	}
	if n := len(e.mailOf(id)); n != 1 {
		t.Errorf("mailbox holds %d mails, want 1", n)
	}
}

// Issue 8, item 6: retried mail is delivered once.
func TestRetriedMailWithItsKeyIsDeliveredOnce(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "got mail"}})
	created, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "helper"}))
	if err != nil {
		t.Fatal(err)
	}
	id := created.Msg.GetSession().GetMeta().GetId()
	path := "/v1/sessions/" + id + "/mail"
	const body = `{"body": {"userMessage": {"text": "note"}}}`
	first, again := &agentsv1.SendMailResponse{}, &agentsv1.SendMailResponse{}
	e.keyed(http.MethodPost, path, body, "mail-1", http.StatusCreated, first)
	e.wait(id)
	e.keyed(http.MethodPost, path, body, "mail-1", http.StatusCreated, again)
	if first.GetEnvelope().GetId() == "" || again.GetEnvelope().GetId() != first.GetEnvelope().GetId() {
		t.Fatalf("mail ids = %q then %q, want one mail", first.GetEnvelope().GetId(), again.GetEnvelope().GetId())
	}
	s := e.wait(id)
	if n := len(e.mailOf(id)); n != 1 || len(s.GetTurns()) != 2 {
		t.Errorf("mailbox holds %d mails and the session %d turns, want one mail folded into one run", n, len(s.GetTurns()))
	}
}

// twoQuestions asks the client two questions in one round.
func twoQuestions() fakellm.Rules {
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "ask_user", Arguments: json.RawMessage(`{"question": "first?"}`)},
			{Name: "ask_user", Arguments: json.RawMessage(`{"question": "second?"}`)},
		}}},
		{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: fakellm.Reply{Text: "noted"}},
	}}
}

// deferredTokens waits for a session to wait for its client and returns
// the tokens of its calls.
func (e *env) deferredTokens(id string) []string {
	e.t.Helper()
	s := e.wait(id)
	if s.GetMeta().GetStatus() != waiting {
		e.t.Fatalf("status = %v, want waiting", s.GetMeta().GetStatus())
	}
	var tokens []string
	for _, p := range s.GetPendingCalls() {
		tokens = append(tokens, p.GetToken())
	}
	return tokens
}

// Issue 8, item 6: a retried answer to a deferred call gets the first
// answer back, not call_completed, and is stored once.
func TestARetriedCompletionWithItsKeyIsTakenOnce(t *testing.T) {
	t.Parallel()
	e := start(t, deferredScript())
	id := e.create("clienty", "ask me").GetMeta().GetId()
	token := e.deferredTokens(id)[0]
	path := "/v1/calls/" + token + "/complete"
	first, again := &agentsv1.CompleteCallResponse{}, &agentsv1.CompleteCallResponse{}
	e.keyed(http.MethodPost, path, `{"text": "blue", "resume": true}`, "complete-1", http.StatusOK, first)
	e.keyed(http.MethodPost, path, `{"text": "blue", "resume": true}`, "complete-1", http.StatusOK, again)
	if again.GetMeta().GetId() != id || again.GetRemaining() != 0 {
		t.Errorf("the retry answered %v", again)
	}
	s := e.wait(id)
	if s.GetMeta().GetStatus() != ready || len(s.GetTurns()) != 4 || lastTurn(s).GetLlm().GetText() != "noted" {
		t.Fatalf("after the answer: status %v, %d turns", s.GetMeta().GetStatus(), len(s.GetTurns()))
	}
	if r := s.GetTurns()[2].GetUser().GetToolResults()[0]; r.GetText() != "blue" {
		t.Errorf("answer = %v", r)
	}
	if n := len(e.model.Requests()); n != 2 {
		t.Errorf("model requests = %d, want 2", n)
	}
}

// Issue 8, item 6: a key belongs to one request. Used again for another
// kind of request, or for the same kind aimed elsewhere, it is refused
// (422, idempotency_key_reused), and nothing is done.
func TestAKeyReusedForAnotherRequestIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, twoQuestions())
	created := &agentsv1.CreateSessionResponse{}
	e.keyed(http.MethodPost, "/v1/sessions", `{"agent": "clienty", "message": {"text": "ask me"}}`, "key-1", http.StatusCreated, created)
	id := created.GetSession().GetMeta().GetId()
	tokens := e.deferredTokens(id)
	if len(tokens) != 2 {
		t.Fatalf("pending calls = %v, want two", tokens)
	}
	other, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "helper"}))
	if err != nil {
		t.Fatal(err)
	}
	otherID := other.Msg.GetSession().GetMeta().GetId()

	conflict := func(what, method, path, body, key string) {
		t.Helper()
		e.refusedReuse(what, method, path, body, key)
	}
	conflict("a create's key on a message", http.MethodPost, "/v1/sessions/"+otherID+"/messages", `{"text": "x"}`, "key-1")
	conflict("a create's key on mail", http.MethodPost, "/v1/sessions/"+otherID+"/mail", `{"body": {"userMessage": {"text": "x"}}}`, "key-1")
	conflict("a create's key on a completion", http.MethodPost, "/v1/calls/"+tokens[0]+"/complete", `{"text": "x"}`, "key-1")

	e.keyed(http.MethodPost, "/v1/sessions/"+id+"/mail", `{"body": {"userMessage": {"text": "later"}}}`, "key-2", http.StatusCreated, nil)
	conflict("a mail's key on mail to another session", http.MethodPost, "/v1/sessions/"+otherID+"/mail", `{"body": {"userMessage": {"text": "later"}}}`, "key-2")

	e.keyed(http.MethodPost, "/v1/calls/"+tokens[0]+"/complete", `{"text": "one"}`, "key-3", http.StatusOK, nil)
	conflict("a completion's key on another call", http.MethodPost, "/v1/calls/"+tokens[1]+"/complete", `{"text": "two", "resume": true}`, "key-3")

	// Nothing the conflicts carried was done: the other session has no
	// turn and no mail, and the second call is still open.
	if s := e.get(otherID); len(s.GetTurns()) != 0 || len(e.mailOf(otherID)) != 0 {
		t.Errorf("the other session got %d turns and %d mails from refused requests", len(s.GetTurns()), len(e.mailOf(otherID)))
	}
	if p := e.get(id).GetPendingCalls(); len(p) != 1 || p[0].GetToken() != tokens[1] {
		t.Fatalf("pending calls = %v, want the second call still open", p)
	}
	e.keyed(http.MethodPost, "/v1/calls/"+tokens[1]+"/complete", `{"text": "two", "resume": true}`, "key-4", http.StatusOK, nil)
	s := e.wait(id)
	if s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "noted" {
		t.Errorf("after both answers: status %v, last turn %v", s.GetMeta().GetStatus(), lastTurn(s))
	}
}

// Issue 8, item 6: a user turn and the start of its run are one write.
// When the store refuses it, neither exists: no session is left ready
// with a question nobody answers, and the client's retry with its key
// posts it once.
func TestARefusedRunStartLeavesNoUnansweredTurn(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "answered"}}, withFaults(), on(d))
		id := e.create("helper", "hi").GetMeta().GetId()
		e.wait(id)

		e.faults.RefuseCommits(1, storefault.WithEvent("run.started"))
		status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "second"}`, "Idempotency-Key", "retry-me")
		if status < 500 {
			t.Fatalf("post while the store refuses = %d %s, want a server error", status, body)
		}
		if s := e.get(id); len(s.GetTurns()) != 2 || s.GetMeta().GetStatus() != ready {
			t.Fatalf("after the refused post: %d turns, status %v; want the session as it was", len(s.GetTurns()), s.GetMeta().GetStatus())
		}
		for range 2 {
			e.keyed(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "second"}`, "retry-me", http.StatusOK, nil)
		}
		s := e.wait(id)
		if len(s.GetTurns()) != 4 || lastTurn(s).GetLlm().GetText() != "answered" {
			t.Fatalf("after the retries: %d turns, last %v; want the message once, answered", len(s.GetTurns()), lastTurn(s))
		}

		e.faults.RefuseCommits(1, storefault.WithEvent("run.started"))
		status, _, body = e.do(http.MethodPost, "/v1/sessions", `{"agent": "helper", "message": {"text": "new"}}`, "Idempotency-Key", "create-me")
		if status < 500 {
			t.Fatalf("create while the store refuses = %d %s, want a server error", status, body)
		}
		if n := e.countSessions(); n != 1 {
			t.Fatalf("sessions = %d after a refused create, want 1", n)
		}
		created := &agentsv1.CreateSessionResponse{}
		e.keyed(http.MethodPost, "/v1/sessions", `{"agent": "helper", "message": {"text": "new"}}`, "create-me", http.StatusCreated, created)
		if s := e.wait(created.GetSession().GetMeta().GetId()); len(s.GetTurns()) != 2 {
			t.Errorf("the retried create has %d turns, want 2", len(s.GetTurns()))
		}
	})
}

// refusedReuse sends a request with a key that belongs to another request
// and expects it refused: 422, invalid_argument, idempotency_key_reused.
func (e *env) refusedReuse(what, method, path, body, key string) {
	e.t.Helper()
	status, _, b := e.do(method, path, body, "Idempotency-Key", key)
	if code, reason, _ := jsonError(e.t, b); status != http.StatusUnprocessableEntity || code != "invalid_argument" || reason != "idempotency_key_reused" {
		e.t.Errorf("%s = %d %s, want 422 invalid_argument idempotency_key_reused", what, status, b)
	}
}

// Issue 20, item 8: a key names one request, body included. The same key
// with another body is refused, as Stripe and the IETF draft do, instead
// of silently answering with what the first request did; the first
// request's retry still gets its answer.
func TestAKeyReusedWithAnotherBodyIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, twoQuestions())
	created := &agentsv1.CreateSessionResponse{}
	e.keyed(http.MethodPost, "/v1/sessions", `{"agent": "clienty", "message": {"text": "ask me"}}`, "create", http.StatusCreated, created)
	id := created.GetSession().GetMeta().GetId()
	e.refusedReuse("a create with another message", http.MethodPost, "/v1/sessions", `{"agent": "clienty", "message": {"text": "ask me twice"}}`, "create")
	e.refusedReuse("a create with another title", http.MethodPost, "/v1/sessions", `{"agent": "clienty", "message": {"text": "ask me"}, "title": "t"}`, "create")
	e.keyed(http.MethodPost, "/v1/sessions", `{"agent": "clienty", "message": {"text": "ask me"}}`, "create", http.StatusCreated, nil)
	if n := e.countSessions(); n != 1 {
		t.Errorf("sessions = %d, want the one the key made", n)
	}
	tokens := e.deferredTokens(id)

	e.keyed(http.MethodPost, "/v1/sessions/"+id+"/mail", `{"body": {"userMessage": {"text": "later"}}}`, "mail", http.StatusCreated, nil)
	e.refusedReuse("mail with another text", http.MethodPost, "/v1/sessions/"+id+"/mail", `{"body": {"userMessage": {"text": "sooner"}}}`, "mail")
	e.refusedReuse("mail with another priority", http.MethodPost, "/v1/sessions/"+id+"/mail", `{"body": {"userMessage": {"text": "later"}}, "priority": "urgent"}`, "mail")
	if n := len(e.mailOf(id)); n != 1 {
		t.Errorf("mail = %d, want the one the key sent", n)
	}

	path := "/v1/calls/" + tokens[0] + "/complete"
	e.keyed(http.MethodPost, path, `{"text": "one"}`, "complete", http.StatusOK, nil)
	e.refusedReuse("a completion with another text", http.MethodPost, path, `{"text": "uno"}`, "complete")
	e.refusedReuse("a completion that now resumes", http.MethodPost, path, `{"text": "one", "resume": true}`, "complete")
	e.keyed(http.MethodPost, path, `{"text": "one"}`, "complete", http.StatusOK, nil)
	e.keyed(http.MethodPost, "/v1/calls/"+tokens[1]+"/complete", `{"text": "two", "resume": true}`, "complete-2", http.StatusOK, nil)
	s := e.wait(id)
	if r := s.GetTurns()[2].GetUser().GetToolResults(); len(r) != 2 || r[0].GetText() != "one" || r[1].GetText() != "two" {
		t.Fatalf("results = %v, want the first answers", r)
	}

	turns := len(s.GetTurns())
	e.keyed(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "hello", "run": {"hold": true}}`, "post", http.StatusOK, nil)
	e.refusedReuse("a post with another text", http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "goodbye", "run": {"hold": true}}`, "post")
	e.refusedReuse("a post that now runs", http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "hello"}`, "post")
	if n := len(e.get(id).GetTurns()); n != turns+1 {
		t.Errorf("turns = %d, want %d: the keyed post once", n, turns+1)
	}
}

// Issue 20, item 8: a retried approval with its key gets the first answer
// back, as any retried completion does, not call_completed; the approved
// call runs once.
func TestARetriedApprovalWithItsKeyGetsTheFirstAnswer(t *testing.T) {
	t.Parallel()
	e := start(t, approvalScript())
	id, token := e.awaitApproval("tmp")
	path := "/v1/calls/" + token + "/complete"
	first, again := &agentsv1.CompleteCallResponse{}, &agentsv1.CompleteCallResponse{}
	e.keyed(http.MethodPost, path, `{"approval": {"approve": true}}`, "approve-1", http.StatusOK, first)
	e.keyed(http.MethodPost, path, `{"approval": {"approve": true}}`, "approve-1", http.StatusOK, again)
	if again.GetMeta().GetId() != id || again.GetRemaining() != 0 {
		t.Errorf("the retry answered %v", again)
	}
	e.refusedReuse("the key on a refusal", http.MethodPost, path, `{"approval": {"approve": false}}`, "approve-1")
	s := e.wait(id)
	if s.GetMeta().GetStatus() != ready || len(s.GetTurns()) != 4 || !strings.Contains(lastTurn(s).GetLlm().GetText(), "read: echo: rm-tmp") {
		t.Fatalf("after the approval: status %v, %d turns, last %v", s.GetMeta().GetStatus(), len(s.GetTurns()), lastTurn(s))
	}
	e.keyed(http.MethodPost, path, `{"approval": {"approve": true}}`, "approve-1", http.StatusOK, again)
	if n := len(e.model.Requests()); n != 2 {
		t.Errorf("model requests = %d, want 2", n)
	}
}

// A webhook's create retried with its key answers with the webhook the
// first made, secret included, as CreateSchedule's does; the key with
// another body is refused.
func TestARetriedWebhookCreateWithItsKeyMakesOneWebhook(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "hello back"}})
	const body = `{"url": "https://93.184.215.14/hook", "events": ["run.stopped"]}`
	first, again := &agentsv1.CreateWebhookResponse{}, &agentsv1.CreateWebhookResponse{}
	e.keyed(http.MethodPost, "/v1/webhooks", body, "hook-1", http.StatusCreated, first)
	e.keyed(http.MethodPost, "/v1/webhooks", body, "hook-1", http.StatusCreated, again)
	if again.GetWebhook().GetId() != first.GetWebhook().GetId() || again.GetSecret() != first.GetSecret() || first.GetSecret() == "" {
		t.Errorf("the retry answered %s, want %s with the same secret", again.GetWebhook().GetId(), first.GetWebhook().GetId())
	}
	hooks := agentsv1connect.NewWebhookServiceClient(e.http.Client(), e.http.URL)
	overConnect, err := hooks.CreateWebhook(ctxFor(t), connect.NewRequest(&agentsv1.CreateWebhookRequest{
		Url: "https://93.184.215.14/hook", Events: []string{"run.stopped"}, IdempotencyKey: "hook-1"}))
	if err != nil || overConnect.Msg.GetWebhook().GetId() != first.GetWebhook().GetId() {
		t.Errorf("the retry over Connect: %v, %v", overConnect, err)
	}
	e.refusedReuse("a webhook's key with another URL", http.MethodPost, "/v1/webhooks", `{"url": "https://93.184.215.15/hook", "events": ["run.stopped"]}`, "hook-1")
	res, err := hooks.ListWebhooks(ctxFor(t), connect.NewRequest(&agentsv1.ListWebhooksRequest{}))
	if err != nil || len(res.Msg.GetWebhooks()) != 1 {
		t.Errorf("webhooks: %v, %v; want one", res, err)
	}
}

// A key in the Idempotency-Key header and another in the body name two
// requests: refused, as any value given twice, rather than one of them
// winning in silence. The same key both ways is one key.
func TestAKeyInTheHeaderAndAnotherInTheBodyIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	status, _, b := e.do(http.MethodPost, "/v1/sessions", `{"agent": "helper", "idempotency_key": "in-body"}`, "Idempotency-Key", "in-header")
	if _, _, msg := jsonError(t, b); status != http.StatusBadRequest || !strings.Contains(msg, "Idempotency-Key") {
		t.Errorf("two keys = %d %s, want 400 naming the header", status, b)
	}
	if n := e.countSessions(); n != 0 {
		t.Errorf("%d sessions after the refused create", n)
	}
	status, _, b = e.do(http.MethodPost, "/v1/schedules", `{"agent": "helper", "every": "1h", "message": {"text": "x"}, "idempotency_key": "in-body"}`, "Idempotency-Key", "in-header")
	if status != http.StatusBadRequest {
		t.Errorf("two keys for a schedule = %d %s, want 400", status, b)
	}
	e.keyed(http.MethodPost, "/v1/sessions", `{"agent": "helper", "idempotency_key": "same"}`, "same", http.StatusCreated, nil)
}

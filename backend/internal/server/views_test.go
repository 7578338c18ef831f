package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/tools/fakellm"
)

// answerRules answer every prompt with its own text.
func answerRules() fakellm.Rules {
	return fakellm.Rules{Default: &fakellm.Reply{Text: "answer: {{last_user}}"}}
}

// conversation makes an idle session of the helper agent with n prompts
// answered (2n turns), each posted without wait and waited for.
func (e *env) conversation(n int) string {
	e.t.Helper()
	id := e.create("helper", "q0").GetMeta().GetId()
	e.wait(id)
	for i := 1; i < n; i++ {
		e.post(id, fmt.Sprintf("q%d", i))
		e.wait(id)
	}
	return id
}

// sliced is the full session as a view of turns [lo, hi) would carry it.
func sliced(full *agentsv1.Session, lo, hi int) *agentsv1.Session {
	want := proto.Clone(full).(*agentsv1.Session)
	want.Turns = want.Turns[lo:hi]
	want.FirstTurnIndex = int32(lo)
	return want
}

// getJSON reads GET /v1/sessions/{id}?query as a GetSessionResponse.
func (e *env) getJSON(id, query string) (int, *agentsv1.Session, []byte) {
	e.t.Helper()
	status, _, body := e.do(http.MethodGet, "/v1/sessions/"+id+"?"+query, "")
	if status != http.StatusOK {
		return status, nil, body
	}
	res := &agentsv1.GetSessionResponse{Session: &agentsv1.Session{}}
	if err := apijson.Unmarshal(body, res.Session); err != nil {
		e.t.Fatalf("GET ?%s: %v in %s", query, err, body)
	}
	return status, res.GetSession(), body
}

// Every view carries exactly the turns the full session has in its
// range, and everything else of the full session: the same meta (with
// the full turn count), pending calls, position and step in flight.
//
// The JSON route writes turns from the loaded session's turn cache: the
// same holds with the default budget, with one that keeps a few turns
// only and with none.
func TestGetSessionViewsCarryTheFullSessionsRange(t *testing.T) {
	t.Parallel()
	for _, budget := range []int64{0, 700, -1} {
		t.Run(fmt.Sprintf("turn cache budget %d", budget), func(t *testing.T) {
			t.Parallel()
			testViews(t, start(t, answerRules(), withRunner(func(o *runner.Options) { o.TurnCacheBudget = budget })))
		})
	}
}

func testViews(t *testing.T, e *env) {
	id := e.conversation(4)
	full := e.get(id)
	if n := len(full.GetTurns()); n != 8 || full.GetMeta().GetTurnCount() != 8 || full.GetFirstTurnIndex() != 0 {
		t.Fatalf("full session has %d turns (turn_count %d, first %d), want 8 from 0", n, full.GetMeta().GetTurnCount(), full.GetFirstTurnIndex())
	}
	for _, tc := range []struct {
		query  string
		req    *agentsv1.GetSessionRequest
		lo, hi int
	}{
		{"", &agentsv1.GetSessionRequest{}, 0, 8},
		{"view=full", &agentsv1.GetSessionRequest{}, 0, 8},
		{"view=meta", &agentsv1.GetSessionRequest{MetaOnly: true}, 8, 8},
		{"after_turn=3", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(3)}, 4, 8},
		{"after_turn=0", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(0)}, 1, 8},
		{"after_turn=7", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(7)}, 8, 8},
		{"last=3", &agentsv1.GetSessionRequest{LastTurns: 3}, 5, 8},
		{"last=20", &agentsv1.GetSessionRequest{LastTurns: 20}, 0, 8},
		{"limit=3", &agentsv1.GetSessionRequest{TurnLimit: 3}, 0, 3},
		{"after_turn=2&limit=3", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(2), TurnLimit: 3}, 3, 6},
		{"after_turn=5&limit=3", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(5), TurnLimit: 3}, 6, 8},
		{"before_turn=5&last=2", &agentsv1.GetSessionRequest{BeforeTurn: proto.Int32(5), LastTurns: 2}, 3, 5},
		{"after_turn=1&before_turn=4", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(1), BeforeTurn: proto.Int32(4)}, 2, 4},
		{"after_turn=1&before_turn=2", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(1), BeforeTurn: proto.Int32(2)}, 2, 2},
		{"before_turn=0", &agentsv1.GetSessionRequest{BeforeTurn: proto.Int32(0)}, 0, 0},
		{"before_turn=8", &agentsv1.GetSessionRequest{BeforeTurn: proto.Int32(8)}, 0, 8},
		{"after_turn=3&wait=true", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(3), Wait: true}, 4, 8},
	} {
		t.Run(tc.query, func(t *testing.T) {
			want := sliced(full, tc.lo, tc.hi)
			tc.req.SessionId = id
			res, err := e.sessions.GetSession(ctxFor(t), connect.NewRequest(tc.req))
			if err != nil {
				t.Fatalf("GetSession: %v", err)
			}
			if got := res.Msg.GetSession(); !proto.Equal(got, want) {
				t.Errorf("GetSession(%v) =\n%v\nwant turns [%d, %d) of the full session:\n%v", tc.req, got, tc.lo, tc.hi, want)
			}
			status, got, body := e.getJSON(id, tc.query)
			if status != http.StatusOK {
				t.Fatalf("GET ?%s = %d %s", tc.query, status, body)
			}
			if !proto.Equal(got, want) {
				t.Errorf("GET ?%s =\n%v\nwant turns [%d, %d) of the full session:\n%v", tc.query, got, tc.lo, tc.hi, want)
			}
		})
	}
}

// A range outside the session's turns, or fields that contradict each
// other, are 400 invalid_argument with a message naming the field, on
// both protocols; a waiting request is refused at once, not after its
// wait.
func TestGetSessionBadRangesAreInvalid(t *testing.T) {
	t.Parallel()
	e := start(t, answerRules())
	id := e.conversation(2) // 4 turns
	for _, tc := range []struct {
		query string
		req   *agentsv1.GetSessionRequest // nil: the JSON route only
		want  string
	}{
		{"after_turn=4", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(4)}, "after_turn 4 is out of range: the session has 4 turns, so at most 3"},
		{"after_turn=-1", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(-1)}, "after_turn"},
		{"before_turn=5", &agentsv1.GetSessionRequest{BeforeTurn: proto.Int32(5)}, "before_turn 5 is out of range: the session has 4 turns, so at most 4"},
		{"after_turn=2&before_turn=2", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(2), BeforeTurn: proto.Int32(2)}, "before_turn 2 must be greater than after_turn 2"},
		{"limit=2&last=2", &agentsv1.GetSessionRequest{TurnLimit: 2, LastTurns: 2}, "set one of them"},
		{"limit=-1", &agentsv1.GetSessionRequest{TurnLimit: -1}, "limit"},
		{"last=-3", &agentsv1.GetSessionRequest{LastTurns: -3}, "last"},
		{"view=meta&last=2", &agentsv1.GetSessionRequest{MetaOnly: true, LastTurns: 2}, "meta_only leaves every turn out"},
		{"view=meta&after_turn=1", &agentsv1.GetSessionRequest{MetaOnly: true, AfterTurn: proto.Int32(1)}, "meta_only"},
		{"after_turn=99&wait=true&timeout=5m", &agentsv1.GetSessionRequest{AfterTurn: proto.Int32(99), Wait: true, Timeout: durationpb.New(5 * time.Minute)}, "after_turn 99"},
		{"view=turns", nil, "query parameter `view` must be full or meta, not \"turns\""},
		{"last=many", nil, "query parameter `last` must be a whole number, not \"many\""},
		{"after_turn=99999999999", nil, "query parameter `after_turn` must be at most 2147483647, not 99999999999"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			status, _, body := e.getJSON(id, tc.query)
			code, _, msg := jsonError(t, body)
			if status != http.StatusBadRequest || code != "invalid_argument" || !strings.Contains(msg, tc.want) {
				t.Errorf("GET ?%s = %d %s, want 400 invalid_argument saying %q", tc.query, status, body, tc.want)
			}
			if tc.req == nil {
				return
			}
			tc.req.SessionId = id
			_, err := e.sessions.GetSession(ctxFor(t), connect.NewRequest(tc.req))
			if codeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("GetSession(%v) = %v, want invalid_argument saying %q", tc.req, err, tc.want)
			}
		})
	}

	// A session without turns takes no after_turn at all.
	res, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "helper"}))
	if err != nil {
		t.Fatal(err)
	}
	empty := res.Msg.GetSession().GetMeta().GetId()
	status, _, body := e.getJSON(empty, "after_turn=0")
	if _, _, msg := jsonError(t, body); status != http.StatusBadRequest || !strings.Contains(msg, "the session has no turns") {
		t.Errorf("after_turn=0 on a session without turns = %d %s, want 400", status, body)
	}
}

// A waiting GetSession with after_turn set to the newest turn the client
// has answers once the run stopped, with only the turns the run added.
// A refused range is refused before the wait (the run is held, so a
// request that waited would not answer).
func TestWaitWithAfterTurnReturnsOnlyTheNewTurns(t *testing.T) {
	t.Parallel()
	e := start(t, answerRules(), withModelFaults())
	id := e.conversation(3) // 6 turns
	hold := e.modelFaults.HoldAfter(1)
	e.post(id, "q3")
	select {
	case <-hold.Held():
	case <-time.After(20 * time.Second):
		t.Fatal("the model never streamed")
	}
	status, _, body := e.getJSON(id, "wait=true&timeout=5m&after_turn=7")
	if _, _, msg := jsonError(t, body); status != http.StatusBadRequest || !strings.Contains(msg, "after_turn 7") {
		t.Errorf("a waiting GET with after_turn past the turns = %d %s, want 400 at once", status, body)
	}

	type answer struct {
		s   *agentsv1.Session
		err error
	}
	connectDone := make(chan answer, 1)
	go func() {
		res, err := e.sessions.GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, Wait: true, AfterTurn: proto.Int32(5)}))
		if err != nil {
			connectDone <- answer{err: err}
			return
		}
		connectDone <- answer{s: res.Msg.GetSession()}
	}()
	jsonDone := make(chan []byte, 1)
	go func() {
		_, _, body := e.do(http.MethodGet, "/v1/sessions/"+id+"?wait=true&after_turn=5", "")
		jsonDone <- body
	}()
	hold.Release()

	full := e.wait(id)
	want := sliced(full, 6, 8)
	if got := lastTurn(full).GetLlm().GetText(); got != "answer: q3" {
		t.Fatalf("last answer = %q, want the held run's answer", got)
	}
	a := <-connectDone
	if a.err != nil {
		t.Fatalf("waiting GetSession: %v", a.err)
	}
	if !proto.Equal(a.s, want) {
		t.Errorf("waiting GetSession after turn 5 =\n%v\nwant only turns 6 and 7 of the full session:\n%v", a.s, want)
	}
	res := &agentsv1.GetSessionResponse{Session: &agentsv1.Session{}}
	if body := <-jsonDone; apijson.Unmarshal(body, res.Session) != nil || !proto.Equal(res.GetSession(), want) {
		t.Errorf("GET ?wait=true&after_turn=5 = %s\nwant only turns 6 and 7 of the full session:\n%v", body, want)
	}
}

// PostMessage with wait answers in one request once the run stopped,
// with the turns stored since the message: exactly what the full session
// has from the message's turn on. Without wait the answer is as before.
func TestPostWithWaitAnswersInOneRequest(t *testing.T) {
	t.Parallel()
	e := start(t, answerRules())
	id := e.conversation(1) // 2 turns

	res, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
		SessionId: id, Message: &agentsv1.Message{Text: "q1"}, Wait: true,
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := res.Msg.GetSession()
	full := e.get(id)
	if !proto.Equal(got, sliced(full, 2, 4)) {
		t.Errorf("PostMessage with wait carries\n%v\nwant turns 2 and 3 of the full session:\n%v", got, sliced(full, 2, 4))
	}
	if got.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY || lastTurn(got).GetLlm().GetText() != "answer: q1" || res.Msg.GetMailId() != "" {
		t.Errorf("PostMessage with wait = %v, want the answer of a stopped run", res.Msg)
	}

	// The JSON route, with the query.
	status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/messages?wait=true&timeout=1m", `{"text": "q2"}`)
	if status != http.StatusOK {
		t.Fatalf("POST messages?wait=true = %d %s", status, body)
	}
	posted := &agentsv1.PostMessageResponse{}
	if err := readAnswer(body, posted); err != nil {
		t.Fatal(err)
	}
	full = e.get(id)
	if !proto.Equal(posted.GetSession(), sliced(full, 4, 6)) || lastTurn(posted.GetSession()).GetLlm().GetText() != "answer: q2" {
		t.Errorf("POST messages?wait=true = %s, want turns 4 and 5 of the full session:\n%v", body, sliced(full, 4, 6))
	}

	// Without wait: the summary as the message was accepted, no session.
	plain := e.post(id, "q3")
	if plain.GetSession() != nil || plain.GetMeta().GetTurnCount() != 7 {
		t.Errorf("PostMessage without wait = %v, want the summary only", plain)
	}
	e.wait(id)
	status, _, body = e.do(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "q4"}`)
	if status != http.StatusOK || strings.Contains(string(body), `"turns"`) {
		t.Errorf("POST messages without wait = %d %s, want the summary only", status, body)
	}
	e.wait(id)

	// A bad wait is refused before anything is posted.
	status, _, body = e.do(http.MethodPost, "/v1/sessions/"+id+"/messages?wait=soon", `{"text": "q5"}`)
	if code, _, _ := jsonError(t, body); status != http.StatusBadRequest || code != "invalid_argument" {
		t.Errorf("POST messages?wait=soon = %d %s, want 400", status, body)
	}
	if n := e.get(id).GetMeta().GetTurnCount(); n != 10 {
		t.Errorf("turn count = %d after a refused post, want 10", n)
	}
}

// A retry of a post with wait under the same idempotency key posts
// nothing and answers with the first request's turns.
func TestPostWithWaitRetriedAnswersFromTheFirstTurn(t *testing.T) {
	t.Parallel()
	e := start(t, answerRules())
	id := e.conversation(1)
	post := func() *agentsv1.PostMessageResponse {
		status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/messages?wait=true", `{"text": "once"}`, "Idempotency-Key", "k1")
		if status != http.StatusOK {
			t.Fatalf("POST = %d %s", status, body)
		}
		res := &agentsv1.PostMessageResponse{}
		if err := readAnswer(body, res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := post()
	second := post()
	full := e.get(id)
	if full.GetMeta().GetTurnCount() != 4 {
		t.Fatalf("turn count = %d after a retry, want 4", full.GetMeta().GetTurnCount())
	}
	for i, res := range []*agentsv1.PostMessageResponse{first, second} {
		if !proto.Equal(res.GetSession(), sliced(full, 2, 4)) {
			t.Errorf("answer %d = %v, want turns 2 and 3 of the full session", i+1, res.GetSession())
		}
	}
}

// A message posted with wait during a run becomes mail: the answer comes
// once the run stopped, with its mail id and the turns stored since the
// mail was accepted, the turn it was folded into among them.
func TestPostWithWaitDuringARunAnswersAfterTheMailIsFolded(t *testing.T) {
	t.Parallel()
	e := start(t, answerRules(), withModelFaults())
	feed := e.openSSE("/v1/events")
	hold := e.modelFaults.HoldAfter(1)
	id := e.create("helper", "q0").GetMeta().GetId()
	select {
	case <-hold.Held():
	case <-time.After(20 * time.Second):
		t.Fatal("the model never streamed")
	}
	done := make(chan *connect.Response[agentsv1.PostMessageResponse], 1)
	fail := make(chan error, 1)
	go func() {
		res, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
			SessionId: id, Message: &agentsv1.Message{Text: "also this"}, Wait: true,
		}))
		if err != nil {
			fail <- err
			return
		}
		done <- res
	}()
	until(t, feed, kind(id, "mail.accepted"))
	hold.Release()
	var res *connect.Response[agentsv1.PostMessageResponse]
	select {
	case err := <-fail:
		t.Fatal(err)
	case res = <-done:
	}
	full := e.get(id)
	got := res.Msg.GetSession()
	if res.Msg.GetMailId() == "" || !proto.Equal(got, sliced(full, 1, int(full.GetMeta().GetTurnCount()))) {
		t.Fatalf("post with wait during a run = %v\nwant a mail id and turns 1… of the full session:\n%v", res.Msg, full)
	}
	folded := false
	for _, turn := range got.GetTurns() {
		for _, m := range turn.GetUser().GetMail() {
			folded = folded || m.GetId() == res.Msg.GetMailId()
		}
	}
	if !folded || got.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Errorf("answer = %v, want the turn the mail was folded into and a stopped run", got)
	}
}

// A post whose run outlasts its timeout answers with what there is: the
// session still running with the message's turn; a meta view then shows
// the step in flight.
func TestPostWithWaitTimesOutWithTheRunGoingOn(t *testing.T) {
	t.Parallel()
	e := start(t, answerRules(), withModelFaults())
	id := e.conversation(1)
	hold := e.modelFaults.HoldAfter(1)
	t.Cleanup(hold.Release)
	status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/messages?wait=true&timeout=10ms", `{"text": "slow"}`)
	if status != http.StatusOK {
		t.Fatalf("POST = %d %s", status, body)
	}
	res := &agentsv1.PostMessageResponse{}
	if err := readAnswer(body, res); err != nil {
		t.Fatal(err)
	}
	s := res.GetSession()
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_RUNNING || s.GetFirstTurnIndex() != 2 ||
		len(s.GetTurns()) != 1 || s.GetTurns()[0].GetUser().GetText() != "slow" {
		t.Errorf("timed-out post = %s, want the running session with the message's turn", body)
	}

	select {
	case <-hold.Held():
	case <-time.After(20 * time.Second):
		t.Fatal("the model never streamed")
	}
	status, meta, body := e.getJSON(id, "view=meta&wait=true&timeout=10ms")
	if status != http.StatusOK || meta.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_RUNNING ||
		len(meta.GetTurns()) != 0 || meta.GetFirstTurnIndex() != 3 || meta.GetInProgress().GetTurnIndex() != 3 || meta.GetInProgress().GetText() == "" {
		t.Errorf("meta view of the held run = %d %s, want no turns and the step in flight at turn 3", status, body)
	}
}

// CreateSession with wait answers once the first run stopped, with the
// whole session.
func TestCreateWithWaitAnswersWithTheWholeSession(t *testing.T) {
	t.Parallel()
	e := start(t, answerRules())
	res, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "helper", Message: &agentsv1.Message{Text: "hello"}, Wait: true,
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := res.Msg.GetSession()
	if full := e.get(got.GetMeta().GetId()); !proto.Equal(got, full) || lastTurn(got).GetLlm().GetText() != "answer: hello" {
		t.Errorf("CreateSession with wait =\n%v\nwant the full session after the run:\n%v", got, full)
	}

	for _, tc := range []struct{ path, body string }{
		{"/v1/sessions?wait=true", `{"agent": "helper", "message": {"text": "hi"}}`},
		{"/v1/sessions", `{"agent": "helper", "message": {"text": "hi"}, "wait": true, "timeout": "60s"}`},
	} {
		status, header, body := e.do(http.MethodPost, tc.path, tc.body)
		if status != http.StatusCreated {
			t.Fatalf("POST %s = %d %s", tc.path, status, body)
		}
		created := &agentsv1.CreateSessionResponse{Session: &agentsv1.Session{}}
		if err := apijson.Unmarshal(body, created.Session); err != nil {
			t.Fatal(err)
		}
		s := created.GetSession()
		if full := e.get(s.GetMeta().GetId()); !proto.Equal(s, full) || len(s.GetTurns()) != 2 || header.Get("Location") != "/v1/sessions/"+s.GetMeta().GetId() {
			t.Errorf("POST %s %s = %s, want the full session after the run", tc.path, tc.body, body)
		}
	}
}

package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// stormSeedEnv names the variable that replays a storm test's seed.
const stormSeedEnv = "AGENTS_STORM_SEED"

// stormRules make every step stream for a while, so control operations
// land in the model call, between steps and during tool calls alike. A
// message containing "#tool" makes the next step call a bash tool.
func stormRules() fakellm.Rules {
	return fakellm.Rules{
		Rules: []fakellm.Rule{
			{Name: "after the tool", Match: fakellm.Match{LastIsToolResult: new(true)}, Reply: fakellm.Reply{
				Text: "the tool said {{last_tool_result}}", ChunkSize: 6, ChunkDelay: "2ms",
			}},
			{Name: "call the tool", Match: fakellm.Match{UserContains: "#tool"}, Reply: fakellm.Reply{
				Text: "calling echo", ChunkSize: 4, ChunkDelay: "2ms",
				ToolCalls: []fakellm.ToolCall{{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "storm"}`)}},
			}},
		},
		Default: &fakellm.Reply{Text: "one two three four five six seven eight nine ten", ChunkSize: 4, ChunkDelay: "3ms"},
	}
}

// stormOp is one control operation of a storm.
type stormOp struct {
	kind  string // post, interrupt, pause, cancel, resume
	text  string // the message of post and interrupt
	delay time.Duration
}

var stormKinds = []string{"post", "interrupt", "pause", "cancel", "resume"}

// TestControlStormNeverStrandsASessionOrLosesAMessage fires interrupts,
// pauses, cancels, resumes and plain messages at one session at once, over
// many seeded iterations (run it with -race). After each storm the session
// must settle in a status that is not running, agree with the events that
// announced it, and hold every posted message exactly once: in a user
// turn, folded into a turn as mail, or still pending. Pending mail must
// then be delivered by a Resume.
func TestControlStormNeverStrandsASessionOrLosesAMessage(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(stormSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", stormSeedEnv, v, err)
		}
	}
	t.Logf("seed %d (replay with %s=%d)", seed, stormSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	e := start(t, stormRules())
	feed := newStormFeed(t, e)
	// One session takes every storm, so each storm also checks that the
	// messages of the earlier ones stay exactly where they were.
	res, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "boss"}))
	if err != nil {
		t.Fatalf("create session: %v", err)
	}
	st := &stormSession{id: res.Msg.GetSession().GetMeta().GetId()}
	iterations := 40
	if testing.Short() {
		iterations = 8
	}
	for i := range iterations {
		storm(t, e, feed, rng, st, i)
		if t.Failed() {
			t.Fatalf("iteration %d failed (seed %d)", i, seed)
		}
	}
}

// stormSession is the session under test and every message posted to it.
type stormSession struct {
	id     string
	posted []string
}

// storm runs one iteration: a message starts a run, then the operations
// arrive together.
func storm(t *testing.T, e *env, feed *stormFeed, rng *rand.Rand, st *stormSession, iter int) {
	id := st.id
	text := func(k int) string {
		s := fmt.Sprintf("message %d.%d", iter, k)
		if rng.IntN(3) == 0 {
			s += " #tool"
		}
		st.posted = append(st.posted, s)
		return s
	}
	first := text(0)
	// The previous iteration left nothing pending and the session ready
	// (or failed), so this message is a user turn that starts a run.
	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
		SessionId: id, Message: &agentsv1.Message{Text: first},
	})); err != nil {
		t.Fatalf("iteration %d: post %q: %v", iter, first, err)
	}
	if rng.IntN(2) == 0 {
		// Let the storm begin inside the model call rather than at the
		// very start of the run.
		feed.until(t, func(ev *agentsv1.Event) bool { return ev.GetSessionId() == id && ev.GetKind() == "text.delta" })
	}

	ops := make([]stormOp, 3+rng.IntN(6))
	for k := range ops {
		op := stormOp{kind: stormKinds[rng.IntN(len(stormKinds))], delay: time.Duration(rng.IntN(80)) * time.Millisecond}
		if op.kind == "post" || op.kind == "interrupt" {
			op.text = text(k + 1)
		}
		ops[k] = op
	}
	t.Logf("iteration %d: first %q, ops %v", iter, first, ops)

	// The delays only spread the operations over the run; nothing relies on
	// them.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	begin := make(chan struct{})
	var wg sync.WaitGroup
	for _, op := range ops {
		wg.Go(func() {
			<-begin
			time.Sleep(op.delay)
			if err := e.applyStormOp(ctx, id, op); err != nil {
				t.Errorf("iteration %d: %s on %s: %v", iter, op.kind, id, err)
			}
		})
	}
	close(begin)
	wg.Wait()

	final := e.stormSettle(t, id)
	t.Logf("iteration %d settled: %v (%s), %d turns, %d pending mail", iter, final.GetMeta().GetStatus(),
		final.GetMeta().GetStatusReason(), len(final.GetTurns()), final.GetMeta().GetPendingMail())
	e.checkStorm(t, feed, id, final, st.posted)
	if t.Failed() {
		return
	}

	// Whatever is still pending must not be stuck: a Resume delivers it.
	if final.GetMeta().GetPendingMail() > 0 || final.GetMeta().GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_PAUSED {
		if _, err := e.sessions.Resume(ctx, connect.NewRequest(&agentsv1.ResumeRequest{SessionId: id})); err != nil {
			t.Errorf("iteration %d: resume after the storm: %v", iter, err)
			return
		}
		final = e.stormSettle(t, id)
		e.checkStorm(t, feed, id, final, st.posted)
		if got := final.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
			t.Errorf("iteration %d: status after the resume = %v (%s), want ready", iter, got, final.GetMeta().GetStatusReason())
		}
		if n := final.GetMeta().GetPendingMail(); n != 0 {
			t.Errorf("iteration %d: %d pieces of mail still pending after the resume", iter, n)
		}
	}
}

func (op stormOp) String() string {
	if op.text != "" {
		return fmt.Sprintf("%s(%q)+%v", op.kind, op.text, op.delay)
	}
	return fmt.Sprintf("%s+%v", op.kind, op.delay)
}

// applyStormOp carries out one storm operation. None of them may fail: each is
// valid in every status the session can be in.
func (e *env) applyStormOp(ctx context.Context, id string, op stormOp) error {
	var err error
	switch op.kind {
	case "post", "interrupt":
		_, err = e.sessions.PostMessage(ctx, connect.NewRequest(&agentsv1.PostMessageRequest{
			SessionId: id, Message: &agentsv1.Message{Text: op.text, Interrupt: op.kind == "interrupt"},
		}))
	case "pause":
		_, err = e.sessions.Pause(ctx, connect.NewRequest(&agentsv1.PauseRequest{SessionId: id}))
	case "cancel":
		_, err = e.sessions.CancelRun(ctx, connect.NewRequest(&agentsv1.CancelRunRequest{SessionId: id}))
	case "resume":
		_, err = e.sessions.Resume(ctx, connect.NewRequest(&agentsv1.ResumeRequest{SessionId: id}))
	default:
		err = fmt.Errorf("unknown operation %q", op.kind)
	}
	return err
}

// stormSettle long-polls a session until no run is active. Still running
// afterwards means a run that never ends or a session marked running with
// no run: both are failures. The timeout is only a safety net.
func (e *env) stormSettle(t *testing.T, id string) *agentsv1.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 70*time.Second)
	defer cancel()
	res, err := e.sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{
		SessionId: id, Wait: true, Timeout: durationpb.New(60 * time.Second),
	}))
	if err != nil {
		t.Fatalf("wait for %s: %v", id, err)
	}
	s := res.Msg.GetSession()
	if s.GetMeta().GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
		t.Errorf("session %s is still running after the long poll", id)
	}
	return s
}

// checkStorm checks a settled session against its events and the messages
// posted to it.
func (e *env) checkStorm(t *testing.T, feed *stormFeed, id string, s *agentsv1.Session, posted []string) {
	status := s.GetMeta().GetStatus()

	// The events: every event published so far has reached the feed, so
	// the session's are complete.
	evs := feed.sync(t, e.hub.Seq(), id)
	var last *agentsv1.Event
	var updated *agentsv1.SessionMeta
	inRun := false
	for _, ev := range evs {
		switch ev.GetKind() {
		case "run.started":
			if inRun {
				t.Errorf("session %s: run.started (seq %d) while a run was active", id, ev.GetSeq())
			}
			inRun, last = true, ev
		case "run.stopped", "session.failed":
			// A run that stopped paused or waiting can still be ended for
			// good (a cancel) without starting again.
			suspended := last.GetRunStopped().GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_PAUSED ||
				last.GetRunStopped().GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_WAITING
			if !inRun && !suspended {
				t.Errorf("session %s: %s (seq %d) with no run active or suspended", id, ev.GetKind(), ev.GetSeq())
			}
			inRun, last = false, ev
		case "session.updated":
			updated = ev.GetSessionUpdated().GetMeta()
		}
	}
	if updated.GetStatus() != status {
		t.Errorf("session %s: status %v, but the last session.updated said %v", id, status, updated.GetStatus())
	}
	switch {
	case last == nil:
		t.Errorf("session %s: no run event at all", id)
	case last.GetKind() == "run.started":
		t.Errorf("session %s: status %v, but the last run event is run.started (seq %d)", id, status, last.GetSeq())
	case last.GetKind() == "session.failed":
		if status != agentsv1.SessionStatus_SESSION_STATUS_FAILED {
			t.Errorf("session %s: status %v, but the last run event is session.failed (seq %d, %s)", id, status, last.GetSeq(), last.GetSessionFailed().GetReason())
		}
	case last.GetRunStopped().GetStatus() != status:
		t.Errorf("session %s: status %v (%s), but the last run event is run.stopped with %v (seq %d, reason %s)",
			id, status, s.GetMeta().GetStatusReason(), last.GetRunStopped().GetStatus(), last.GetSeq(), last.GetRunStopped().GetReason())
	}

	// The messages: each exactly once, in a user turn's text, folded into a
	// turn as mail, or pending.
	res, err := e.sessions.ListMail(ctxFor(t), connect.NewRequest(&agentsv1.ListMailRequest{SessionId: id, PendingOnly: true}))
	if err != nil {
		t.Fatalf("list mail of %s: %v", id, err)
	}
	pending := res.Msg.GetMail()
	if int(s.GetMeta().GetPendingMail()) != len(pending) {
		t.Errorf("session %s: meta says %d pending mail, ListMail lists %d", id, s.GetMeta().GetPendingMail(), len(pending))
	}
	seen := map[string][]string{}
	for _, turn := range s.GetTurns() {
		u := turn.GetUser()
		if u == nil {
			continue
		}
		if u.GetText() != "" {
			seen[u.GetText()] = append(seen[u.GetText()], fmt.Sprintf("text of turn %d", turn.GetIndex()))
		}
		for _, m := range u.GetMail() {
			text := m.GetBody().GetUserMessage().GetText()
			seen[text] = append(seen[text], fmt.Sprintf("mail folded into turn %d", turn.GetIndex()))
		}
	}
	for _, m := range pending {
		text := m.GetBody().GetUserMessage().GetText()
		seen[text] = append(seen[text], "pending mail "+m.GetId())
	}
	for _, text := range posted {
		if where := seen[text]; len(where) != 1 {
			t.Errorf("session %s: message %q found %d times (%v), want exactly once", id, text, len(where), where)
		}
		delete(seen, text)
	}
	for text, where := range seen {
		t.Errorf("session %s: unexpected message %q (%v)", id, text, where)
	}
}

// stormFeed reads the owner's SSE stream and keeps the events of each
// session.
type stormFeed struct {
	stream *sseStream
	seq    uint64
	bySess map[string][]*agentsv1.Event
}

func newStormFeed(t *testing.T, e *env) *stormFeed {
	t.Helper()
	l := &stormFeed{stream: e.openSSE("/v1/events"), bySess: map[string][]*agentsv1.Event{}}
	if f, _ := l.stream.next(t); f.event != "" {
		t.Fatalf("first frame = %+v, want the opening ping", f)
	}
	return l
}

// read takes the next event off the stream.
func (l *stormFeed) read(t *testing.T) *agentsv1.Event {
	t.Helper()
	for {
		f, ok := l.stream.next(t)
		if !ok {
			t.Fatal("event stream ended")
		}
		if f.id == "" {
			continue // heartbeat
		}
		if f.event == "snapshot" || f.event == "lagged" {
			t.Fatalf("event stream fell behind: %s frame", f.event)
		}
		ev := f.eventOf(t)
		l.seq = ev.GetSeq()
		l.bySess[ev.GetSessionId()] = append(l.bySess[ev.GetSessionId()], ev)
		return ev
	}
}

// until reads events until one matches.
func (l *stormFeed) until(t *testing.T, match func(*agentsv1.Event) bool) {
	t.Helper()
	for !match(l.read(t)) {
	}
}

// sync reads events up to seq and returns the session's events so far.
func (l *stormFeed) sync(t *testing.T, seq uint64, id string) []*agentsv1.Event {
	t.Helper()
	for l.seq < seq {
		l.read(t)
	}
	return l.bySess[id]
}

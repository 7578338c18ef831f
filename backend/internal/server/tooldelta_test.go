package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/tools/fakellm"
)

// writtenArguments are the arguments of the call the model writes in
// pieces of three characters (writing()).
const writtenArguments = `{"word":"streamed-in-small-pieces"}`

// writing answers the first message with a call of the echo tool whose
// arguments stream in small pieces, and the call's result with "done".
func writing() fakellm.Rules {
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{LastIsToolResult: new(false)}, Reply: fakellm.Reply{
			ToolCalls: []fakellm.ToolCall{{ID: "call_written", Name: "bash_echo", Arguments: json.RawMessage(writtenArguments)}},
			ChunkSize: 3,
		}},
		{Reply: fakellm.Reply{Text: "done"}},
	}}
}

// writtenCall folds the tool-call deltas of one call as a client does:
// an id or a name replaces what was known, arguments are appended.
type writtenCall struct {
	id, name, arguments string
	deltas              int
}

func (c *writtenCall) fold(t *testing.T, d *agentsv1.ToolCallDelta) {
	t.Helper()
	if d.GetTurnIndex() != 1 || d.GetCallIndex() != 0 {
		t.Fatalf("a tool-call delta of turn %d, call %d; the model writes one call, in turn 1", d.GetTurnIndex(), d.GetCallIndex())
	}
	if d.GetCallId() != "" {
		c.id = d.GetCallId()
	}
	if d.GetName() != "" {
		c.name = d.GetName()
	}
	c.arguments += d.GetArguments()
	c.deltas++
}

// check compares the folded call with the call the session stored.
func (c *writtenCall) check(t *testing.T, s *agentsv1.Session) {
	t.Helper()
	calls := s.GetTurns()[1].GetLlm().GetToolCalls()
	if len(calls) != 1 {
		t.Fatalf("the session stored %d calls", len(calls))
	}
	stored := calls[0]
	if c.arguments != stored.GetArguments() || c.id != stored.GetId() || c.name != stored.GetName() {
		t.Errorf("the deltas made the call %s %s(%s), the session stored %s %s(%s)",
			c.id, c.name, c.arguments, stored.GetId(), stored.GetName(), stored.GetArguments())
	}
}

// Issue 21, item 4: the tool calls the model writes stream as
// tool_call.delta events, on SSE and on Connect's Subscribe alike, and
// folded they are the call the session stores.
func TestTheToolCallsBeingWrittenStreamToSubscribers(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"sse", "connect"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			e := start(t, writing())
			var next func() *agentsv1.Event
			if via == "sse" {
				feed := e.openSSE("/v1/events")
				next = func() *agentsv1.Event {
					for {
						f, ok := feed.next(t)
						if !ok {
							t.Fatal("the stream ended")
						}
						if f.id == "" || f.event == "snapshot" {
							continue
						}
						ev := f.eventOf(t)
						if f.event != ev.GetKind() || f.id != events.PositionOf(ev).String() {
							t.Fatalf("frame %q, %q for a %s event at %v", f.event, f.id, ev.GetKind(), events.PositionOf(ev))
						}
						return ev
					}
				}
			} else {
				ctx, cancel := context.WithCancel(ctxFor(t))
				defer cancel()
				stream, err := e.events.Subscribe(ctx, connect.NewRequest(&agentsv1.SubscribeRequest{}))
				if err != nil {
					t.Fatal(err)
				}
				defer stream.Close()
				next = func() *agentsv1.Event {
					for stream.Receive() {
						if ev := stream.Msg().GetEvent(); ev != nil {
							return ev
						}
					}
					t.Fatalf("the stream ended: %v", stream.Err())
					return nil
				}
			}

			id := e.create("boss", "write a call").GetMeta().GetId()
			var c writtenCall
			for {
				ev := next()
				if ev.GetSessionId() != id {
					continue
				}
				if d := ev.GetToolCallDelta(); d != nil {
					if ev.GetKind() != "tool_call.delta" || ev.GetDeltaSeq() == 0 {
						t.Fatalf("a tool-call delta of kind %q at %v", ev.GetKind(), events.PositionOf(ev))
					}
					if c.deltas == 0 && (d.GetCallId() == "" || d.GetName() == "") {
						t.Errorf("the first delta of the call lacks its id or name: %v", d)
					}
					c.fold(t, d)
				}
				if ev.GetKind() == "run.stopped" {
					break
				}
			}
			if c.deltas < len(writtenArguments)/3 {
				t.Errorf("%d tool-call deltas for arguments streamed in %d pieces", c.deltas, (len(writtenArguments)+2)/3)
			}
			c.check(t, e.wait(id))
		})
	}
}

// A client that opens a session while the model writes a call shows the
// call from in_progress, then subscribes after the position GetSession
// gave: the deltas that follow continue the arguments with no gap and no
// piece twice.
func TestAClientJoiningWhileACallIsWrittenContinuesItWithoutAGap(t *testing.T) {
	t.Parallel()
	e := start(t, writing(), withModelFaults())
	// The call's id and name, then two pieces of its arguments.
	hold := e.modelFaults.HoldAfter(3)
	defer hold.Release()
	id := e.create("boss", "write a call").GetMeta().GetId()
	<-hold.Held()
	res, err := e.sessions.GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id}))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Msg.GetSession()
	ip := s.GetInProgress()
	if ip.GetTurnIndex() != 1 || len(ip.GetToolCalls()) != 1 || ip.GetToolCalls()[0].GetArguments() != writtenArguments[:6] {
		t.Fatalf("in progress mid-call: %v", ip)
	}
	shown := ip.GetToolCalls()[0]
	c := writtenCall{id: shown.GetId(), name: shown.GetName(), arguments: shown.GetArguments()}

	pos := events.Position{Seq: s.GetSeq(), Delta: s.GetDeltaSeq()}
	feed := e.openSSE("/v1/sessions/"+id+"/events", "Last-Event-ID", pos.String())
	if mode := feed.header.Get("Agents-Replay"); mode != "replay" {
		t.Fatalf("Agents-Replay = %q, want replay", mode)
	}
	hold.Release()
	for {
		f, ok := feed.next(t)
		if !ok {
			t.Fatal("the stream ended")
		}
		if f.id == "" {
			continue
		}
		ev := f.eventOf(t)
		if d := ev.GetToolCallDelta(); d != nil {
			c.fold(t, d)
		}
		if ev.GetKind() == "run.stopped" {
			break
		}
	}
	c.check(t, e.wait(id))
}

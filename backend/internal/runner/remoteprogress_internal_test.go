package runner

import (
	"context"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
)

// Deltas relayed from the holder can reach this server before the logged
// events that came before them where they were written (the relay is
// quicker than the log). The position a read of the step in flight gives
// must still place the deltas it folded in: a client subscribing after it
// gets the next ones, not a wait for the session's next logged event.
func TestARemoteReadAfterALoggedEventPlacesTheDeltasItFolded(t *testing.T) {
	hub := events.New(events.Options{})
	hub.SetRelayed()
	var p remoteProgress
	p.reset(hub.Position())
	follow, _ := hub.Subscribe(events.AllScope(), nil)
	defer follow.Close()
	const id = "s1"
	piece := func(args string) *agentsv1.Event {
		return &agentsv1.Event{SessionId: id, Kind: "tool_call.delta", Body: &agentsv1.Event_ToolCallDelta{
			ToolCallDelta: &agentsv1.ToolCallDelta{TurnIndex: 1, CallId: "c1", Name: "bash_noop", Arguments: args}}}
	}
	hub.PublishDelta(piece(`{"no`))
	hub.PublishDelta(piece(`te":`))
	hub.Publish(&agentsv1.Event{SessionId: id, Kind: "run.started", Body: &agentsv1.Event_RunStarted{RunStarted: &agentsv1.RunStarted{}}})
	for range 3 {
		p.take(<-follow.C(), func(string) bool { return false })
	}
	step, pos := p.of(id)
	if len(step.calls) != 1 || step.calls[0].Arguments != `{"note":` {
		t.Fatalf("the step folded: %+v", step)
	}

	sub, err := hub.SubscribeAt(context.Background(), events.SessionScope(id), &pos)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Mode() != events.ModeReplay {
		t.Fatalf("a subscription after the read's position %v: %v", pos, sub.Mode())
	}
	hub.PublishDelta(piece(`"wri`))
	select {
	case ev := <-sub.C():
		if got := ev.GetToolCallDelta().GetArguments(); got != `"wri` {
			t.Fatalf("the subscription's first event: %v", ev)
		}
	case <-time.After(time.Second):
		t.Fatalf("the next delta did not come after the read's position %v", pos)
	}
}

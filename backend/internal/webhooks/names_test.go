package webhooks

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store"
)

func logged(t *testing.T, owner, sessionID string, ev *agentsv1.Event) store.Event {
	t.Helper()
	ev = events.WithKind(ev)
	b, err := proto.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return store.Event{Seq: 10, Owner: owner, SessionID: sessionID, Kind: ev.Kind, Body: b}
}

func stopped(status agentsv1.SessionStatus, reason string) *agentsv1.Event {
	return &agentsv1.Event{Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{Status: status, Reason: reason}}}
}

// Each name a webhook subscribes to stands for the event kinds of the
// stream docs/webhooks.md names.
func TestNamesOfTheStreamsEvents(t *testing.T) {
	ready, waiting, paused := agentsv1.SessionStatus_SESSION_STATUS_READY, agentsv1.SessionStatus_SESSION_STATUS_WAITING, agentsv1.SessionStatus_SESSION_STATUS_PAUSED
	for _, tc := range []struct {
		name string
		ev   *agentsv1.Event
		want []string
	}{
		{"done", stopped(ready, "done"), []string{NameRunStopped, NameSessionIdle}},
		{"waiting for calls", stopped(waiting, "waiting"), []string{NameRunStopped}},
		{"budget", stopped(paused, "budget_exceeded"), []string{NameRunStopped, NameBudgetExceeded}},
		{"failed", &agentsv1.Event{Body: &agentsv1.Event_SessionFailed{SessionFailed: &agentsv1.SessionFailed{Code: "model_error"}}}, []string{NameRunFailed}},
		{"deferred", &agentsv1.Event{Body: &agentsv1.Event_CallsDeferred{CallsDeferred: &agentsv1.CallsDeferred{}}}, []string{NameCallWaiting}},
		{"agents", &agentsv1.Event{Body: &agentsv1.Event_AgentsChanged{AgentsChanged: &agentsv1.AgentsChanged{}}}, []string{NameAgentChanged}},
		{"started", &agentsv1.Event{Body: &agentsv1.Event_RunStarted{RunStarted: &agentsv1.RunStarted{}}}, nil},
		{"updated", &agentsv1.Event{Body: &agentsv1.Event_SessionUpdated{SessionUpdated: &agentsv1.SessionUpdated{}}}, nil},
	} {
		got, err := namesOf(logged(t, "alice", "s1", tc.ev))
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: names %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	got, err := namesOf(store.Event{Kind: events.KindScheduleFired, Body: []byte("not read")})
	if err != nil || !slices.Equal(got, []string{NameScheduleFired}) {
		t.Errorf("schedule.fired: %v, %v", got, err)
	}
}

// A webhook is sent its owner's events and the server-wide ones after it
// was registered; a server-wide webhook every owner's.
func TestWhichWebhooksAnEventGoesTo(t *testing.T) {
	mine := store.Webhook{Owner: "alice", Events: []string{NameRunStopped}, AfterSeq: 5}
	all := store.Webhook{Owner: "root", ServerWide: true, Events: []string{NameRunStopped, NameAgentChanged}, AfterSeq: 5}
	for _, tc := range []struct {
		name         string
		ev           store.Event
		names        []string
		mine, server bool
	}{
		{"alice's", store.Event{Seq: 6, Owner: "alice", SessionID: "s"}, []string{NameRunStopped}, true, true},
		{"bob's", store.Event{Seq: 6, Owner: "bob", SessionID: "s"}, []string{NameRunStopped}, false, true},
		{"before it", store.Event{Seq: 5, Owner: "alice", SessionID: "s"}, []string{NameRunStopped}, false, false},
		{"server-wide", store.Event{Seq: 7}, []string{NameAgentChanged}, false, true},
		{"not subscribed", store.Event{Seq: 7, Owner: "alice", SessionID: "s"}, []string{NameRunFailed}, false, false},
	} {
		if got := wants(mine, tc.ev, tc.names); got != tc.mine {
			t.Errorf("%s to alice's webhook: %v, want %v", tc.name, got, tc.mine)
		}
		if got := wants(all, tc.ev, tc.names); got != tc.server {
			t.Errorf("%s to a server-wide webhook: %v, want %v", tc.name, got, tc.server)
		}
	}
}

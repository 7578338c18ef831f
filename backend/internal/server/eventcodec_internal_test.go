package server

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
)

// The event stream's codecs write what connect's own would, for event
// items (shared by every subscriber) and for every other item alike.
func TestEventCodecsWriteWhatTheDefaultsWould(t *testing.T) {
	hub := events.New(events.Options{})
	ev := &agentsv1.Event{SessionId: "s", Owner: "o", Kind: "text.delta",
		Body: &agentsv1.Event_TextDelta{TextDelta: &agentsv1.TextDelta{Text: "héllo \"world\"", TurnIndex: 3}}}
	hub.Publish(ev)
	items := []*agentsv1.SubscribeResponse{
		{Item: &agentsv1.SubscribeResponse_Event{Event: ev}},
		{Item: &agentsv1.SubscribeResponse_Heartbeat{Heartbeat: &agentsv1.Heartbeat{Seq: 7}}},
		{Item: &agentsv1.SubscribeResponse_Lagged{Lagged: &agentsv1.Lagged{LastSeq: 7, LastDeltaSeq: 2}}},
	}
	for _, item := range items {
		for range 2 { // the second time from the hub's cache
			b, err := eventProtoCodec{hub}.Marshal(item)
			if err != nil {
				t.Fatal(err)
			}
			got := &agentsv1.SubscribeResponse{}
			if err := proto.Unmarshal(b, got); err != nil || !proto.Equal(got, item) {
				t.Fatalf("proto: %v decodes to %v (%v)", item, got, err)
			}
			j, err := eventJSONCodec{hub}.Marshal(item)
			if err != nil {
				t.Fatal(err)
			}
			got = &agentsv1.SubscribeResponse{}
			if err := protojson.Unmarshal(j, got); err != nil || !proto.Equal(got, item) {
				t.Fatalf("json: %s decodes to %v (%v)", j, got, err)
			}
		}
	}
}

package apijson_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
)

// TestConnectRefusesUnknownEnumNames: an enum value protobuf's JSON does
// not name is refused, naming the field and the values, where protojson
// left unknown alone would drop it and read the field as unset (urgent
// mail sent as normal, a list filter ignored).
func TestConnectRefusesUnknownEnumNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		msg  proto.Message
		want string
	}{
		{`{"sessionId": "s", "body": {"userMessage": {"text": "x"}}, "priority": "urgent"}`, &agentsv1.SendMailRequest{},
			"field `priority` must be one of MAIL_PRIORITY_NORMAL, MAIL_PRIORITY_URGENT, not \"urgent\""},
		{`{"status": "SESSION_STATUS_BOGUS"}`, &agentsv1.ListSessionsRequest{},
			"field `status` must be one of SESSION_STATUS_READY, SESSION_STATUS_RUNNING, SESSION_STATUS_WAITING, SESSION_STATUS_PAUSED, SESSION_STATUS_FAILED, not \"SESSION_STATUS_BOGUS\""},
		{`{"unknownField": 1, "status": "failed"}`, &agentsv1.ListSessionsRequest{},
			"field `status` must be one of SESSION_STATUS_READY, SESSION_STATUS_RUNNING, SESSION_STATUS_WAITING, SESSION_STATUS_PAUSED, SESSION_STATUS_FAILED, not \"failed\""},
		{`{"kinds": ["x"], "scope": "SUBSCRIBE_SCOPE_NOPE"}`, &agentsv1.SubscribeRequest{}, "field `scope` must be one of"},
	} {
		err := apijson.ConnectCodec{}.Unmarshal([]byte(tc.body), tc.msg)
		if err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
			t.Errorf("%s: got %v, want %s", tc.body, err, tc.want)
		}
	}
}

// TestConnectReadsWhatProtobufReads: protobuf's own forms are read, and a
// field the server does not know is left out, as Connect clients expect
// of a server older than they are.
func TestConnectReadsWhatProtobufReads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want proto.Message
	}{
		{`{"status": "SESSION_STATUS_FAILED"}`, &agentsv1.ListSessionsRequest{Status: agentsv1.SessionStatus_SESSION_STATUS_FAILED}},
		{`{"status": 5, "agent": "a"}`, &agentsv1.ListSessionsRequest{Status: agentsv1.SessionStatus_SESSION_STATUS_FAILED, Agent: "a"}},
		{`{"status": null, "newerField": {"x": "SESSION_STATUS_BOGUS"}}`, &agentsv1.ListSessionsRequest{}},
		{`{"sessionId": "s", "priority": "MAIL_PRIORITY_URGENT", "futureField": true}`, &agentsv1.SendMailRequest{SessionId: "s", Priority: agentsv1.MailPriority_MAIL_PRIORITY_URGENT}},
	} {
		got := tc.want.ProtoReflect().New().Interface()
		if err := (apijson.ConnectCodec{}).Unmarshal([]byte(tc.body), got); err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		if !proto.Equal(got, tc.want) {
			t.Errorf("%s read as %v, want %v", tc.body, got, tc.want)
		}
	}
}

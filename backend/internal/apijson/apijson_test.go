package apijson_test

import (
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
)

var when = timestamppb.New(time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC))

// TestWrite pins the written form of the shapes people read most.
func TestWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		msg  proto.Message
		want string
	}{
		{
			"session summary",
			&agentsv1.SessionMeta{Id: "s1", Agent: "helper", Status: agentsv1.SessionStatus_SESSION_STATUS_READY, Usage: &agentsv1.Usage{PromptTokens: 12}, CreateTime: when},
			`{"id":"s1","agent":"helper","owner":"","title":"","status":"ready","status_reason":"","parent_id":"","forked_from":"","turn_count":0,"usage":{"prompt_tokens":12,"completion_tokens":0,"cached_tokens":0,"reasoning_tokens":0,"cost_usd":null},"pending_mail":0,"pending_calls":0,"depth":0,"create_time":"2025-01-02T15:04:05Z","update_time":null,"allowed_tools":[],"root_id":"","budget":null,"agent_version":0,"pinned_agent_version":0,"agent_generation":0}`,
		},
		{
			"session: the summary at the top",
			&agentsv1.Session{Meta: &agentsv1.SessionMeta{Id: "s1", Status: agentsv1.SessionStatus_SESSION_STATUS_RUNNING}, Seq: 7, Turns: []*agentsv1.Turn{{Index: 0, Kind: &agentsv1.Turn_User{User: &agentsv1.UserTurn{Text: "hi"}}}}},
			`{"id":"s1","agent":"","owner":"","title":"","status":"running","status_reason":"","parent_id":"","forked_from":"","turn_count":0,"usage":null,"pending_mail":0,"pending_calls":0,"depth":0,"create_time":null,"update_time":null,"allowed_tools":[],"root_id":"","budget":null,"agent_version":0,"pinned_agent_version":0,"agent_generation":0,"turns":[{"index":0,"create_time":null,"user":{"text":"hi","attachments":[],"tool_results":[],"mail":[]}}],"deferred_calls":[],"seq":7,"delta_seq":0,"in_progress":null,"first_turn_index":0}`,
		},
		{
			"mail: the body beside the envelope",
			&agentsv1.MailEnvelope{Id: "m1", Sender: &agentsv1.MailSender{Kind: &agentsv1.MailSender_User{User: "local"}}, Priority: agentsv1.MailPriority_MAIL_PRIORITY_URGENT,
				Body: &agentsv1.MailBody{Kind: &agentsv1.MailBody_UserMessage{UserMessage: &agentsv1.UserMessage{Text: "stop <now> & go"}}}},
			`{"id":"m1","session_id":"","from":{"user":"local"},"priority":"urgent","kind":"user_message","text":"stop <now> & go","attachment_names":[],"create_time":null,"deliver_time":null}`,
		},
		{
			"control mail",
			&agentsv1.MailEnvelope{Id: "m2", Body: &agentsv1.MailBody{Kind: &agentsv1.MailBody_Control{Control: &agentsv1.ControlMessage{Kind: &agentsv1.ControlMessage_StopRun{StopRun: &agentsv1.StopRun{Reason: "enough"}}}}}},
			`{"id":"m2","session_id":"","from":null,"priority":null,"kind":"control","control":"stop_run","reason":"enough","create_time":null,"deliver_time":null}`,
		},
		{
			"event: the body beside the position",
			&agentsv1.Event{Seq: 12, Kind: "run.stopped", Time: when, Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{Status: agentsv1.SessionStatus_SESSION_STATUS_READY, Steps: 2}}},
			`{"seq":12,"session_id":"","owner":"","time":"2025-01-02T15:04:05Z","kind":"run.stopped","delta_seq":0,"status":"ready","reason":"","steps":2,"text":"","budget":""}`,
		},
		{
			"post: the summary when the answer has no session",
			&agentsv1.PostMessageResponse{Meta: &agentsv1.SessionMeta{Id: "s1"}, MailId: "m1"},
			`{"mail_id":"m1","session":{"id":"s1","agent":"","owner":"","title":"","status":null,"status_reason":"","parent_id":"","forked_from":"","turn_count":0,"usage":null,"pending_mail":0,"pending_calls":0,"depth":0,"create_time":null,"update_time":null,"allowed_tools":[],"root_id":"","budget":null,"agent_version":0,"pinned_agent_version":0,"agent_generation":0}}`,
		},
		{
			"the last page has no next token",
			&agentsv1.ListSessionsResponse{},
			`{"sessions":[],"next_page_token":null,"has_more":false}`,
		},
		{
			"maps: empty as {}",
			&agentsv1.ErrorDetail{Code: "params_required"},
			`{"code":"params_required","metadata":{}}`,
		},
		{
			"maps: keys in order",
			&agentsv1.ErrorDetail{Code: "params_required", Metadata: map[string]string{"repo": "x", "branch": "main"}},
			`{"code":"params_required","metadata":{"branch":"main","repo":"x"}}`,
		},
		{
			"durations read as people write them",
			&agentsv1.ToolResult{Duration: durationpb.New(90 * time.Minute)},
			`{"call_id":"","name":"","text":"","status":null,"child_session_id":"","duration":"1h30m"}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := apijson.Marshal(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Error("not JSON")
			}
			if _, ok := tc.msg.(*agentsv1.PostMessageResponse); ok {
				return // its summary reads back as a session
			}
			back := tc.msg.ProtoReflect().New().Interface()
			if err := apijson.Unmarshal(got, back); err != nil {
				t.Fatalf("read back: %v", err)
			}
			if !proto.Equal(back, tc.msg) {
				t.Errorf("read back %v, want %v", back, tc.msg)
			}
		})
	}
}

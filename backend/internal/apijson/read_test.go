package apijson_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
)

// TestReadForms reads the short and the long form of the same request to
// the same message.
func TestReadForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		forms []string
		want  proto.Message
	}{
		{
			"enums: short, upper, full",
			[]string{`{"status": "failed"}`, `{"status": "FAILED"}`, `{"status": "SESSION_STATUS_FAILED"}`, `{"status": 5}`},
			&agentsv1.ListSessionsRequest{Status: agentsv1.SessionStatus_SESSION_STATUS_FAILED},
		},
		{
			"names: snake_case and camelCase",
			[]string{`{"parent_id": "p", "roots_only": true}`, `{"parentId": "p", "rootsOnly": true}`},
			&agentsv1.ListSessionsRequest{ParentId: "p", RootsOnly: true},
		},
		{
			"durations: Go's, protobuf's, seconds",
			[]string{`{"timeout": "10m"}`, `{"timeout": "600s"}`, `{"timeout": 600}`, `{"timeout": "600"}`},
			&agentsv1.GetSessionRequest{Timeout: durationpb.New(10 * time.Minute)},
		},
		{
			"a message at the top or nested, with params",
			[]string{`{"text": "hi", "params": {"K": "v"}}`, `{"message": {"text": "hi"}, "params": {"K": "v"}}`},
			&agentsv1.PostMessageRequest{Message: &agentsv1.Message{Text: "hi"}, Params: map[string]string{"K": "v"}},
		},
		{
			"mail: flat or nested",
			[]string{`{"text": "hi", "priority": "urgent"}`, `{"kind": "user_message", "text": "hi", "priority": "urgent"}`, `{"body": {"userMessage": {"text": "hi"}}, "priority": "MAIL_PRIORITY_URGENT"}`},
			&agentsv1.SendMailRequest{Priority: agentsv1.MailPriority_MAIL_PRIORITY_URGENT, Body: &agentsv1.MailBody{Kind: &agentsv1.MailBody_UserMessage{UserMessage: &agentsv1.UserMessage{Text: "hi"}}}},
		},
		{
			"mail from an agent, told by its fields",
			[]string{`{"agent": "helper", "text": "done"}`, `{"kind": "agent_message", "agent": "helper", "text": "done"}`},
			&agentsv1.SendMailRequest{Body: &agentsv1.MailBody{Kind: &agentsv1.MailBody_AgentMessage{AgentMessage: &agentsv1.AgentMessage{Agent: "helper", Text: "done"}}}},
		},
		{
			"64-bit integers: numbers or strings",
			[]string{`{"prompt_tokens": 12}`, `{"promptTokens": "12"}`},
			&agentsv1.Usage{PromptTokens: 12},
		},
		{
			"null is unset",
			[]string{`{"agent": null, "message": null}`, `{}`},
			&agentsv1.CreateSessionRequest{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, form := range tc.forms {
				got := tc.want.ProtoReflect().New().Interface()
				if err := apijson.Unmarshal([]byte(form), got); err != nil {
					t.Errorf("%s: %v", form, err)
					continue
				}
				if !proto.Equal(got, tc.want) {
					t.Errorf("%s read as %v, want %v", form, got, tc.want)
				}
			}
		})
	}
}

// TestReadErrors says what is wrong in the API's words.
func TestReadErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`{"agent": 7}`, "field `agent` must be a string"},
		{`{"agent": "a", "mesage": {}}`, "field `mesage` is not a field here; the fields are agent, message, run, params, parent_id, title, idempotency_key, wait, timeout, budget, agent_version"},
		{`{"message": {"text": ["x"]}}`, "field `message.text` must be a string"},
		{`{"message": {"attachments": [{"size": 1.5}]}}`, "field `message.attachments[0].size` must be a whole number"},
		{`{"run": {"max_steps": 99999999999}}`, "field `run.max_steps` must be a whole number from -2147483648 to 2147483647"},
		{`{"timeout": "soon"}`, "field `timeout` must be a duration such as \"10m\" or \"1.5s\", or a number of seconds"},
		{`{"params": {"K": 1}}`, "field `params.K` must be a string"},
		{`{"wait": "yes"}`, "field `wait` must be true or false"},
		{`{"agent": "a",}`, "the body is not JSON: invalid character '}' looking for beginning of object key string at byte 14"},
		{`[1]`, "the body must be a JSON object"},
		{`{} {}`, "the body holds more than one JSON value"},
	} {
		err := apijson.Unmarshal([]byte(tc.body), &agentsv1.CreateSessionRequest{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v\nwant %s", tc.body, err, tc.want)
		}
	}
	err := apijson.Unmarshal([]byte(`{"status": "done"}`), &agentsv1.ListSessionsRequest{})
	if want := "field `status` must be one of ready, running, waiting, paused, failed"; err == nil || err.Error() != want {
		t.Errorf("enum: got %v, want %s", err, want)
	}
}

func TestReadRefusesWhatWouldPassSilently(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`{"agent": "a", "agent": "b"}`, "field `agent` is given twice"},
		{`{"message": {"text": "a", "text": "b"}}`, "field `message.text` is given twice"},
		{"{\"agent\": \"\xff\"}", "the body is not UTF-8"},
	} {
		err := apijson.Unmarshal([]byte(tc.body), &agentsv1.CreateSessionRequest{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %s", tc.body, err, tc.want)
		}
	}
	err := apijson.Unmarshal([]byte(`{"text": "a", "error": "b"}`), &agentsv1.CompleteCallRequest{})
	if want := "field `error` cannot be given with `text`: set one of text, error, approval"; err == nil || err.Error() != want {
		t.Errorf("oneof: got %v, want %s", err, want)
	}
}

// The route table's short name for a new session's parent is read too.
func TestReadAliases(t *testing.T) {
	req := &agentsv1.CreateSessionRequest{}
	if err := apijson.Unmarshal([]byte(`{"agent": "a", "parent": "p1"}`), req); err != nil || req.GetParentId() != "p1" {
		t.Fatalf("parent: %v, %v; want parent_id p1", req, err)
	}
}

// A key of one member of a flattened oneof, given with another member,
// is refused naming both, not as a key that is no field (the list of
// fields would hold it).
func TestReadRefusesAKeyOfAnotherMember(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`{"kind": "control", "control": "stop_run", "text": "x"}`, "field `text` belongs to user_message or agent_message, not to the control given: give the fields of one of user_message, agent_message, control"},
		{`{"kind": "user_message", "text": "x", "control": "stop_run"}`, "field `control` belongs to control, not to the user_message given: give the fields of one of user_message, agent_message, control"},
		{`{"kind": "user_message", "text": "x", "agent": "a"}`, "field `agent` belongs to agent_message, not to the user_message given: give the fields of one of user_message, agent_message, control"},
	} {
		err := apijson.Unmarshal([]byte(tc.body), &agentsv1.SendMailRequest{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v\nwant %s", tc.body, err, tc.want)
		}
	}
}

package apijson_test

import (
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/jsoncheck"
)

// bracketBomb is a CreateSession body whose message is a list nested n
// levels deep: 2n bytes that a reader building something per level turns
// into gigabytes.
func bracketBomb(n int) []byte {
	return []byte(`{"agent":"probe","message":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
}

// TestReadRefusesDeepNesting: a body nested past jsoncheck.MaxDepth is
// refused as a whole before anything is built from it, with the limit
// in the message; one at the limit is read as usual (and refused here for
// what it holds, not for its depth).
func TestReadRefusesDeepNesting(t *testing.T) {
	t.Parallel()
	err := apijson.Unmarshal(bracketBomb(40_000), &agentsv1.CreateSessionRequest{})
	want := "the body nests lists and objects more than 100 levels deep (at byte 126)"
	if err == nil || err.Error() != want {
		t.Errorf("40,000 levels: got %v\nwant %s", err, want)
	}
	// 99 list levels in the body's object: 100 in all.
	err = apijson.Unmarshal(bracketBomb(jsoncheck.MaxDepth-1), &agentsv1.CreateSessionRequest{})
	if want := "field `message` must be an object"; err == nil || err.Error() != want {
		t.Errorf("at the limit: got %v, want %s", err, want)
	}
}

// TestReadNamesDeepFields: the path an error names is built only for the
// error, and names the field however deep it sits.
func TestReadNamesDeepFields(t *testing.T) {
	t.Parallel()
	body := `{"params": {"A": "x"}, "message": {"attachments": [{"name": "a"}, {"name": "b", "name": "c"}]}}`
	err := apijson.Unmarshal([]byte(body), &agentsv1.CreateSessionRequest{})
	if want := "field `message.attachments[1].name` is given twice"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestReadRefusesBothSpellings: a field given under two of its names (the
// snake_case one, the camelCase one, an alias) is given twice, as the
// query's parameters are, at any depth; neither silently wins.
func TestReadRefusesBothSpellings(t *testing.T) {
	t.Parallel()
	create := []struct{ body, want string }{
		{`{"agent": "a", "parent_id": "p1", "parentId": "p2"}`, "field `parent_id` is given twice, as parent_id and as parentId: give it once"},
		{`{"agent": "a", "parentId": "p1", "parent": "p2"}`, "field `parent_id` is given twice, as parentId and as parent: give it once"},
		{`{"agent": "a", "parent_id": "p1", "parentId": null}`, "field `parent_id` is given twice, as parent_id and as parentId: give it once"},
		{`{"agent": "a", "idempotency_key": "k", "idempotencyKey": "k"}`, "field `idempotency_key` is given twice, as idempotency_key and as idempotencyKey: give it once"},
		{`{"run": {"max_steps": 1, "maxSteps": 2}}`, "field `run.max_steps` is given twice, as run.max_steps and as run.maxSteps: give it once"},
		{`{"message": {"attachments": [{"media_type": "a", "mediaType": "b"}]}}`, "field `message.attachments[0].media_type` is given twice, as message.attachments[0].media_type and as message.attachments[0].mediaType: give it once"},
	}
	for _, tc := range create {
		err := apijson.Unmarshal([]byte(tc.body), &agentsv1.CreateSessionRequest{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v\nwant %s", tc.body, err, tc.want)
		}
	}
	// A message at the top and nested gives its fields twice too.
	err := apijson.Unmarshal([]byte(`{"text": "a", "message": {"text": "b"}}`), &agentsv1.PostMessageRequest{})
	if want := "field `text` is given twice, as message.text and as text: give it once"; err == nil || err.Error() != want {
		t.Errorf("inlined message: got %v, want %s", err, want)
	}
	// Mail's flat body and its nested one alike.
	err = apijson.Unmarshal([]byte(`{"text": "a", "body": {"user_message": {"text": "b"}}}`), &agentsv1.SendMailRequest{})
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("inlined mail body: got %v, want a field given twice", err)
	}
}

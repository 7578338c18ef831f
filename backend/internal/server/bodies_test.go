package server_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// bracketBomb is a CreateSession body whose message is a list nested n
// levels deep.
func bracketBomb(n int) string {
	return `{"agent":"probe","message":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
}

// TestDeeplyNestedBodiesAreRefused: the 80 KB body of 40,000 nested
// lists is refused as invalid_argument, saying how deep a body may nest,
// on the JSON routes and over Connect's JSON alike, without a reader
// building anything per level (BenchmarkUnmarshalBracketBomb measures
// what it costs).
func TestDeeplyNestedBodiesAreRefused(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript())
	bomb := bracketBomb(40_000)
	const want = "more than 100 levels deep"

	status, _, body := e.do("POST", "/v1/sessions", bomb)
	code, _, message := jsonError(t, body)
	if status != http.StatusBadRequest || code != "invalid_argument" || !strings.Contains(message, want) {
		t.Errorf("POST /v1/sessions = %d %s, want 400 invalid_argument saying %q", status, body, want)
	}

	status, _, body = e.do("POST", "/agents.v1.SessionService/CreateSession", bomb)
	var ce struct{ Code, Message string }
	if err := json.Unmarshal(body, &ce); err != nil || status != http.StatusBadRequest || ce.Code != "invalid_argument" || !strings.Contains(ce.Message, want) {
		t.Errorf("Connect CreateSession = %d %s, want 400 invalid_argument saying %q", status, body, want)
	}

	// The event stream's own JSON codec reads Subscribe's request, one
	// frame of Connect's streaming protocol.
	msg := `{"scope":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`
	frame := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
	status, _, body = e.do("POST", "/agents.v1.EventService/Subscribe", string(frame)+msg, "Content-Type", "application/connect+json")
	if status != http.StatusOK || !strings.Contains(string(body), `"code":"invalid_argument"`) || !strings.Contains(string(body), want) {
		t.Errorf("Connect Subscribe = %d %q, want invalid_argument saying %q", status, body, want)
	}
}

// TestBodyFieldsGivenInBothSpellingsAreRefused: a body giving parent_id
// and parentId is refused as the query is, naming both, on the JSON
// routes and over Connect's JSON (whose reader refuses the duplicate and
// whose message now says so).
func TestBodyFieldsGivenInBothSpellingsAreRefused(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript())
	parent := e.create("boss", "hi").GetMeta().GetId()
	e.wait(parent)

	for _, body := range []string{
		`{"agent": "boss", "parent_id": "` + parent + `", "parentId": "` + parent + `"}`,
		`{"agent": "boss", "parent": "` + parent + `", "parent_id": "` + parent + `"}`,
		`{"agent": "boss", "message": {"text": "a"}, "run": {"max_steps": 1, "maxSteps": 2}}`,
	} {
		status, _, b := e.do("POST", "/v1/sessions", body)
		code, _, message := jsonError(t, b)
		if status != http.StatusBadRequest || code != "invalid_argument" || !strings.Contains(message, "given twice") {
			t.Errorf("POST /v1/sessions %s = %d %s, want 400 invalid_argument, given twice", body, status, b)
		}
	}
	status, _, b := e.do("POST", "/v1/sessions/"+parent+"/messages", `{"text": "a", "message": {"text": "b"}}`)
	if code, _, message := jsonError(t, b); status != http.StatusBadRequest || code != "invalid_argument" || !strings.Contains(message, "given twice") {
		t.Errorf("a message nested and at the top = %d %s, want 400 invalid_argument, given twice", status, b)
	}

	status, _, b = e.do("POST", "/agents.v1.SessionService/CreateSession", `{"agent": "boss", "parent_id": "`+parent+`", "parentId": "`+parent+`"}`)
	var ce struct{ Code, Message string }
	if err := json.Unmarshal(b, &ce); err != nil || status != http.StatusBadRequest || ce.Code != "invalid_argument" || !strings.Contains(ce.Message, "given twice") {
		t.Errorf("Connect CreateSession with both spellings = %d %s, want 400 invalid_argument, given twice", status, b)
	}
}

// unknownKeys is an object of n keys no request has: 800,000 make the
// 9.5 MB body of issue 33.
func unknownKeys(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%06d":1`, i)
	}
	b.WriteString("}")
	return b.String()
}

// TestSmallBodiesAreBounded (issue 33): a route whose body holds only
// short fields (PATCH a session, PUT a budget, rename) refuses a body over
// 64 KiB with 413 before reading it — from its length when it has one,
// after the limit when it is sent without — rather than read 9.5 MB of
// unknown keys into memory to answer 400; within the limit an unknown key
// is refused as ever.
func TestSmallBodiesAreBounded(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript())
	id := e.create("boss", "hi").GetMeta().GetId()
	e.wait(id)
	wide := unknownKeys(800_000)
	for _, r := range []request{
		{method: "PATCH", path: "/v1/sessions/" + id, body: wide},
		{method: "PUT", path: "/v1/owners/local/budget", body: wide},
		{method: "POST", path: "/v1/sessions/" + id + "/rename", body: wide},
	} {
		for _, chunked := range []bool{false, true} {
			status, body := e.sendBody(r, chunked)
			if code, reason, _ := jsonError(t, body); status != http.StatusRequestEntityTooLarge || code != "resource_exhausted" || reason != "body_too_large" {
				t.Errorf("%s %s, 9.5 MB (chunked %v) = %d %s, want 413 body_too_large", r.method, r.path, chunked, status, body)
			}
		}
	}
	status, _, body := e.do("PATCH", "/v1/sessions/"+id, `{"title": "t", "k000001": 1}`)
	if code, _, message := jsonError(t, body); status != http.StatusBadRequest || code != "invalid_argument" || !strings.Contains(message, "`k000001` is not a field here") {
		t.Errorf("PATCH with an unknown key = %d %s, want 400 naming it", status, body)
	}
}

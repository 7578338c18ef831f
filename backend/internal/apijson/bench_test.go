package apijson_test

import (
	"fmt"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
)

// BenchmarkMarshalSession writes a session of 20 turns, what a waiting
// GetSession answers after ten prompts.
func BenchmarkMarshalSession(b *testing.B) {
	s := &agentsv1.Session{Meta: &agentsv1.SessionMeta{Id: "0198f0a2-5d2e-7c4b-9a7e-1f2d3c4b5a69", Agent: "helper", Status: agentsv1.SessionStatus_SESSION_STATUS_READY, Usage: &agentsv1.Usage{PromptTokens: 12}, CreateTime: when, UpdateTime: when}}
	for i := range 20 {
		t := &agentsv1.Turn{Index: int32(i), CreateTime: when}
		if i%2 == 0 {
			t.Kind = &agentsv1.Turn_User{User: &agentsv1.UserTurn{Text: fmt.Sprintf("prompt number %d: say something", i)}}
		} else {
			t.Kind = &agentsv1.Turn_Llm{Llm: &agentsv1.LlmTurn{Text: "Done.", Usage: &agentsv1.Usage{PromptTokens: 40, CompletionTokens: 2}}}
		}
		s.Turns = append(s.Turns, t)
	}
	msg := &agentsv1.GetSessionResponse{Session: s}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := apijson.Marshal(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalPostMessage reads a prompt as the JSON route
// POST /v1/sessions/{id}/messages receives it.
func BenchmarkUnmarshalPostMessage(b *testing.B) {
	body := []byte(`{"session_id":"0198f0a2-5d2e-7c4b-9a7e-1f2d3c4b5a69","text":"prompt number 3: say something"}`)
	b.ReportAllocs()
	for b.Loop() {
		var req agentsv1.PostMessageRequest
		if err := apijson.Unmarshal(body, &req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalBracketBomb reads the 80 KB body of 40,000 nested
// lists: refused from one pass over its bytes, in bounded memory.
func BenchmarkUnmarshalBracketBomb(b *testing.B) {
	body := bracketBomb(40_000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := apijson.Unmarshal(body, &agentsv1.CreateSessionRequest{}); err == nil {
			b.Fatal("the bomb was read")
		}
	}
}

// BenchmarkUnmarshalWideList reads a list of 10,000 attachments: what is
// built for each is its value, never its path.
func BenchmarkUnmarshalWideList(b *testing.B) {
	body := []byte(`{"agent":"probe","message":{"attachments":[` + strings.Repeat(`{"name":"a.txt","media_type":"text/plain"},`, 9_999) + `{"name":"a.txt"}]}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := apijson.Unmarshal(body, &agentsv1.CreateSessionRequest{}); err != nil {
			b.Fatal(err)
		}
	}
}

package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

func TestRenameSessionRetitlesItAndSaysSo(t *testing.T) {
	e := start(t, bossScript())
	feed := e.openSSE("/v1/events")
	id := e.create("helper", "what is up").GetMeta().GetId()
	e.wait(id)

	res, err := e.sessions.RenameSession(ctxFor(t), connect.NewRequest(&agentsv1.RenameSessionRequest{SessionId: id, Title: "  Weekly plan  "}))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Msg.GetMeta().GetTitle(); got != "Weekly plan" {
		t.Errorf("renamed meta title = %q, want the trimmed title", got)
	}
	ev := until(t, feed, func(ev *agentsv1.Event) bool {
		return ev.GetSessionId() == id && ev.GetSessionUpdated().GetMeta().GetTitle() == "Weekly plan"
	})
	if ev.GetKind() != "session.updated" {
		t.Errorf("event = %v, want session.updated", ev)
	}
	if got := e.wait(id).GetMeta().GetTitle(); got != "Weekly plan" {
		t.Errorf("stored title = %q", got)
	}

	status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/rename", `{"title": "From curl"}`)
	var meta struct{ Title string }
	if err := json.Unmarshal(body, &meta); status != http.StatusOK || err != nil || meta.Title != "From curl" {
		t.Errorf("rename over JSON = %d %s", status, body)
	}
	status, _, body = e.do(http.MethodPost, "/v1/sessions/"+id+"/rename", `{"title": "`+strings.Repeat("x", 201)+`"}`)
	if code, _, _ := jsonError(t, body); status != http.StatusBadRequest || code != "invalid_argument" {
		t.Errorf("rename with a title too long = %d %s", status, body)
	}
	status, _, body = e.do(http.MethodPost, "/v1/sessions/00000000-0000-4000-8000-000000000000/rename", `{"title": "x"}`)
	if status != http.StatusNotFound {
		t.Errorf("rename of an unknown session = %d %s", status, body)
	}
}

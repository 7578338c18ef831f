package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/tools/fakellm"
)

// Every answer that carries a webhook carries its last delivery: where
// it stands and what its last attempt got, so a list of webhooks shows
// how each fares without asking for each one's deliveries. A webhook
// nothing was queued for has none.
func TestWebhooksCarryTheirLastDelivery(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	ctx := ctxFor(t)
	hooks := agentsv1connect.NewWebhookServiceClient(e.http.Client(), e.http.URL)
	made, err := hooks.CreateWebhook(ctx, connect.NewRequest(&agentsv1.CreateWebhookRequest{Url: "https://93.184.215.14/hook", Events: []string{"run.stopped"}}))
	if err != nil {
		t.Fatal(err)
	}
	if made.Msg.GetWebhook().GetLastDelivery() != nil {
		t.Errorf("a new webhook's last delivery: %v, want none", made.Msg.GetWebhook().GetLastDelivery())
	}
	id := made.Msg.GetWebhook().GetId()

	// A run logs events; the newest is queued for the webhook (as the
	// dispatcher's fan-out would) and its first attempt fails.
	e.wait(e.create("boss", "hello").GetMeta().GetId())
	var newest store.Event
	if _, err := e.store.FanOut(ctx, 1000, func(_ []store.Webhook, evs []store.Event) []store.Delivery {
		newest = evs[len(evs)-1]
		return []store.Delivery{{ID: "msg_last", WebhookID: id, Seq: newest.Seq, Kind: newest.Kind, SessionID: newest.SessionID,
			Body: newest.Body, NextAttempt: time.Unix(0, 0), Created: time.Unix(100, 0)}}
	}); err != nil {
		t.Fatal(err)
	}
	claimed, err := e.store.ClaimDeliveries(ctx, id, "c1", time.Unix(200, 0), time.Now().Add(time.Hour), 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %v, %v; want msg_last", claimed, err)
	}
	if _, err := e.store.RecordAttempt(ctx, store.Attempt{DeliveryID: "msg_last", WebhookID: id, Claim: "c1", At: time.Unix(300, 0),
		StatusCode: 503, Error: "HTTP 503", Next: time.Unix(400, 0)}); err != nil {
		t.Fatal(err)
	}

	check := func(what string, w *agentsv1.Webhook) {
		t.Helper()
		d := w.GetLastDelivery()
		if d.GetId() != "msg_last" || d.GetSeq() != newest.Seq || d.GetKind() != newest.Kind ||
			d.GetStatus() != agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING || d.GetAttempts() != 1 ||
			d.GetLastStatusCode() != 503 || d.GetLastError() != "HTTP 503" ||
			!d.GetNextAttempt().AsTime().Equal(time.Unix(400, 0)) || !d.GetCreated().AsTime().Equal(time.Unix(100, 0)) ||
			!d.GetLastAttempt().AsTime().Equal(time.Unix(300, 0)) || d.GetDelivered() != nil {
			t.Errorf("%s: last delivery %v, want msg_last pending after an attempt at 300 that got 503", what, d)
		}
		if !w.GetFailingSince().AsTime().Equal(time.Unix(300, 0)) {
			t.Errorf("%s: failing since %v, want the failed attempt's time", what, w.GetFailingSince())
		}
	}
	list, err := hooks.ListWebhooks(ctx, connect.NewRequest(&agentsv1.ListWebhooksRequest{}))
	if err != nil || len(list.Msg.GetWebhooks()) != 1 {
		t.Fatalf("list: %v, %v; want one webhook", list, err)
	}
	check("listed", list.Msg.GetWebhooks()[0])
	got, err := hooks.GetWebhook(ctx, connect.NewRequest(&agentsv1.GetWebhookRequest{WebhookId: id}))
	if err != nil {
		t.Fatal(err)
	}
	check("read", got.Msg.GetWebhook())
	logged, err := hooks.ListWebhookDeliveries(ctx, connect.NewRequest(&agentsv1.ListWebhookDeliveriesRequest{WebhookId: id}))
	if err != nil || len(logged.Msg.GetDeliveries()) != 1 {
		t.Fatalf("deliveries: %v, %v; want msg_last", logged, err)
	}
	check("logged", &agentsv1.Webhook{LastDelivery: logged.Msg.GetDeliveries()[0], FailingSince: got.Msg.GetWebhook().GetFailingSince()})
	off := false
	updated, err := hooks.UpdateWebhook(ctx, connect.NewRequest(&agentsv1.UpdateWebhookRequest{WebhookId: id, Enabled: &off}))
	if err != nil {
		t.Fatal(err)
	}
	d := updated.Msg.GetWebhook().GetLastDelivery()
	if d.GetId() != "msg_last" || d.GetLastStatusCode() != 503 {
		t.Errorf("disabled: last delivery %v, want msg_last", d)
	}

	// The JSON route names it as the protocol does.
	status, _, body := e.do(http.MethodGet, "/v1/webhooks", "")
	var listed struct {
		Webhooks []struct {
			LastDelivery struct {
				ID             string `json:"id"`
				Status         string `json:"status"`
				LastStatusCode int    `json:"last_status_code"`
				LastError      string `json:"last_error"`
				LastAttempt    string `json:"last_attempt"`
			} `json:"last_delivery"`
		} `json:"webhooks"`
	}
	if err := json.Unmarshal(body, &listed); status != http.StatusOK || err != nil || len(listed.Webhooks) != 1 {
		t.Fatalf("GET /v1/webhooks = %d %s (%v)", status, body, err)
	}
	if l := listed.Webhooks[0].LastDelivery; l.ID != "msg_last" || l.Status != "pending" || l.LastStatusCode != 503 || l.LastError != "HTTP 503" ||
		l.LastAttempt != "1970-01-01T00:05:00Z" {
		t.Errorf("GET /v1/webhooks: last delivery %+v, want msg_last pending after a 503 at 300", l)
	}
	status, _, body = e.do(http.MethodGet, "/v1/webhooks/"+id+"/deliveries", "")
	var log struct {
		Deliveries []struct {
			ID          string `json:"id"`
			LastAttempt string `json:"last_attempt"`
		} `json:"deliveries"`
	}
	if err := json.Unmarshal(body, &log); status != http.StatusOK || err != nil || len(log.Deliveries) != 1 {
		t.Fatalf("GET /v1/webhooks/%s/deliveries = %d %s (%v)", id, status, body, err)
	}
	if d := log.Deliveries[0]; d.ID != "msg_last" || d.LastAttempt != "1970-01-01T00:05:00Z" {
		t.Errorf("GET /v1/webhooks/%s/deliveries: %+v, want msg_last last tried at 300", id, d)
	}
}

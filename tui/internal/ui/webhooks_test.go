package ui

import (
	"context"
	"slices"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// webhookFixtures are two webhooks: one whose last delivery waits for a
// retry after a 503 three minutes ago, failing for three hours; one the
// server disabled.
func webhookFixtures(f *fakeServer) {
	f.webhooks = []*agentsv1.Webhook{
		{Id: "wh_1", Owner: "alice", Url: "https://ops.example.com/agents", Events: []string{"run.stopped", "run.failed"},
			Status: agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED, Description: "the ops room", Created: at(0), FailingSince: at(21 * 60)},
		{Id: "wh_2", Owner: "alice", Url: "https://gone.example.com/hook", Events: []string{"call.waiting"},
			Status: agentsv1.WebhookStatus_WEBHOOK_STATUS_FAILING, StatusReason: "every attempt failed for 3 days: HTTP 502", Created: at(1)},
	}
	f.deliveries = map[string][]*agentsv1.WebhookDelivery{
		"wh_1": {
			{Id: "msg_2", WebhookId: "wh_1", Seq: 12, Kind: "session.failed", SessionId: id(7), Status: agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING,
				Attempts: 2, LastStatusCode: 503, LastError: "HTTP 503", LastAttempt: at(24*60 - 3), NextAttempt: at(24*60 + 2), Created: at(21 * 60)},
			{Id: "msg_1", WebhookId: "wh_1", Seq: 7, Kind: "run.stopped", SessionId: id(1), Status: agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED,
				Attempts: 1, LastStatusCode: 204, LastAttempt: at(20 * 60), Created: at(20 * 60), Delivered: at(20 * 60)},
		},
	}
}

// withLast is a webhook as the server answers it: with its newest
// delivery.
func (f *fakeServer) withLast(w *agentsv1.Webhook) *agentsv1.Webhook {
	out := proto.CloneOf(w)
	if ds := f.deliveries[w.GetId()]; len(ds) > 0 {
		out.LastDelivery = proto.CloneOf(ds[0])
	}
	return out
}

func (f *fakeServer) ListWebhooks(context.Context, *connect.Request[agentsv1.ListWebhooksRequest]) (*connect.Response[agentsv1.ListWebhooksResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*agentsv1.Webhook, len(f.webhooks))
	for i, w := range f.webhooks {
		out[i] = f.withLast(w)
	}
	return connect.NewResponse(&agentsv1.ListWebhooksResponse{Webhooks: out}), nil
}

func (f *fakeServer) UpdateWebhook(_ context.Context, req *connect.Request[agentsv1.UpdateWebhookRequest]) (*connect.Response[agentsv1.UpdateWebhookResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.webhooks {
		if w.GetId() == req.Msg.GetWebhookId() {
			if req.Msg.Enabled != nil {
				w.Status, w.StatusReason = agentsv1.WebhookStatus_WEBHOOK_STATUS_DISABLED, ""
				if req.Msg.GetEnabled() {
					w.Status, w.FailingSince = agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED, nil
				}
			}
			return connect.NewResponse(&agentsv1.UpdateWebhookResponse{Webhook: f.withLast(w)}), nil
		}
	}
	return nil, connect.NewError(connect.CodeNotFound, nil)
}

func (f *fakeServer) DeleteWebhook(_ context.Context, req *connect.Request[agentsv1.DeleteWebhookRequest]) (*connect.Response[agentsv1.DeleteWebhookResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.webhooks)
	f.webhooks = slices.DeleteFunc(f.webhooks, func(w *agentsv1.Webhook) bool { return w.GetId() == req.Msg.GetWebhookId() })
	if len(f.webhooks) == n {
		return nil, connect.NewError(connect.CodeNotFound, nil)
	}
	return connect.NewResponse(&agentsv1.DeleteWebhookResponse{}), nil
}

func (f *fakeServer) ListWebhookDeliveries(_ context.Context, req *connect.Request[agentsv1.ListWebhookDeliveriesRequest]) (*connect.Response[agentsv1.ListWebhookDeliveriesResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return connect.NewResponse(&agentsv1.ListWebhookDeliveriesResponse{Deliveries: f.deliveries[req.Msg.GetWebhookId()]}), nil
}

func (f *fakeServer) webhookIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for _, w := range f.webhooks {
		ids = append(ids, w.GetId())
	}
	return ids
}

// The Webhooks tab lists each webhook's state and last outcome; one is
// disabled from there, its deliveries listed, and another deleted once
// confirmed.
func TestFlowWebhooksTab(t *testing.T) {
	fl := startFlow(t, nil, nil)
	fl.press("tab", "tab", "tab", "tab")
	fl.waitFor("the webhooks", func(s string) bool {
		return strings.Contains(s, "› ops.example.com/agents") && strings.Contains(s, "✗ 503") && strings.Contains(s, "failing") &&
			strings.Contains(s, "session.failed pending (HTTP 503), last tried")
	})
	fl.press("p")
	fl.waitFor("the webhook disabled", func(s string) bool {
		return strings.Contains(s, "disabled https://ops.example.com/agents") && strings.Contains(s, "⏸ disabled")
	})
	fl.press("enter")
	fl.waitFor("its deliveries", func(s string) bool {
		return strings.Contains(s, "Deliveries to ops.example.com/agents") && strings.Contains(s, "run.stopped #7") && strings.Contains(s, "HTTP 204")
	})
	fl.press("esc", "down", "ctrl+d")
	fl.waitFor("the question", func(s string) bool {
		return strings.Contains(s, "Delete the webhook to https://gone.example.com/hook and its delivery log? y/n")
	})
	fl.press("n")
	fl.waitFor("the question gone", func(s string) bool { return !strings.Contains(s, "y/n") })
	if ids := fl.f.webhookIDs(); len(ids) != 2 {
		t.Fatalf("after n the webhooks are %v, want both", ids)
	}
	fl.press("ctrl+d", "y")
	fl.waitFor("the webhook deleted", func(s string) bool {
		return strings.Contains(s, "deleted https://gone.example.com/hook") && !strings.Contains(s, "  gone.example.com/hook")
	})
	if ids := fl.f.webhookIDs(); !slices.Equal(ids, []string{"wh_1"}) {
		t.Errorf("after y the webhooks are %v, want wh_1", ids)
	}
	fl.quit()
}

// While a delete waits for y or n, q is an answer's letter, not quit;
// the footer says what the answers are.
func TestWebhooksDeleteQuestionHoldsTheKeyboard(t *testing.T) {
	m, f := started(t, 80, 24)
	press(m, "tab", "tab", "tab", "tab", "ctrl+d")
	if !m.webhooks.Confirming() {
		t.Fatal("ctrl+d asked nothing")
	}
	if foot := footer(t, m); !strings.Contains(foot, "y delete") || !strings.Contains(foot, "n keep") {
		t.Errorf("footer %q, want y delete and n keep", foot)
	}
	if !m.typing() || key.Matches(keyPress("q"), m.quitHint()) {
		t.Errorf("q quits while the question waits (the footer offers %s)", m.quitHint().Help().Key)
	}
	press(m, "esc")
	if m.webhooks.Confirming() || len(f.webhooks) != 2 {
		t.Errorf("esc: confirming %v, %d webhooks; want neither deleted", m.webhooks.Confirming(), len(f.webhooks))
	}
}

func TestGoldenWebhooks(t *testing.T) {
	eachSize(t, func(t *testing.T, w, h int) {
		m, _ := started(t, w, h)
		press(m, "tab", "tab", "tab", "tab")
		golden.RequireEqual(t, view(t, m))
	})
}

func TestGoldenWebhookDeliveries(t *testing.T) {
	eachSize(t, func(t *testing.T, w, h int) {
		m, _ := started(t, w, h)
		press(m, "tab", "tab", "tab", "tab", "enter")
		golden.RequireEqual(t, view(t, m))
	})
}

func TestGoldenWebhookDeleteConfirmation(t *testing.T) {
	m, _ := started(t, 80, 24)
	press(m, "tab", "tab", "tab", "tab", "ctrl+d")
	frame := ansi.Strip(view(t, m))
	if !strings.Contains(frame, "Delete the webhook to https://ops.example.com/agents and its delivery log? y/n") {
		t.Errorf("no question in\n%s", frame)
	}
	golden.RequireEqual(t, view(t, m))
}

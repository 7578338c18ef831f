package webhooksview

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/tabtest"
	"github.com/agents-os/agents/tui/internal/theme"
)

// start is the tests' first clock reading.
var start = time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)

func ts(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(start.Add(d)) }

// fakeServer serves the tab's calls from memory, as the server answers
// them: each webhook with its newest delivery; enabling one clears its
// failing mark. It records what it was asked.
type fakeServer struct {
	mu           sync.Mutex
	webhooks     []*agentsv1.Webhook
	deliveries   map[string][]*agentsv1.WebhookDelivery
	lists        int
	deliveriesOf []string
	calls        []string
	// err, when set, is every call's answer.
	err error
}

var _ Client = (*fakeServer)(nil)

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
	f.lists++
	if f.err != nil {
		return nil, f.err
	}
	out := make([]*agentsv1.Webhook, len(f.webhooks))
	for i, w := range f.webhooks {
		out[i] = f.withLast(w)
	}
	return connect.NewResponse(&agentsv1.ListWebhooksResponse{Webhooks: out}), nil
}

func (f *fakeServer) UpdateWebhook(_ context.Context, req *connect.Request[agentsv1.UpdateWebhookRequest]) (*connect.Response[agentsv1.UpdateWebhookResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	verb := "disable "
	if req.Msg.GetEnabled() {
		verb = "enable "
	}
	f.calls = append(f.calls, verb+req.Msg.GetWebhookId())
	if f.err != nil {
		return nil, f.err
	}
	for _, w := range f.webhooks {
		if w.GetId() == req.Msg.GetWebhookId() {
			w.Status, w.StatusReason = agentsv1.WebhookStatus_WEBHOOK_STATUS_DISABLED, ""
			if req.Msg.GetEnabled() {
				w.Status, w.FailingSince = agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED, nil
			}
			return connect.NewResponse(&agentsv1.UpdateWebhookResponse{Webhook: f.withLast(w)}), nil
		}
	}
	return nil, connect.NewError(connect.CodeNotFound, errors.New("unknown webhook"))
}

func (f *fakeServer) DeleteWebhook(_ context.Context, req *connect.Request[agentsv1.DeleteWebhookRequest]) (*connect.Response[agentsv1.DeleteWebhookResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "delete "+req.Msg.GetWebhookId())
	if f.err != nil {
		return nil, f.err
	}
	f.webhooks = slices.DeleteFunc(f.webhooks, func(w *agentsv1.Webhook) bool { return w.GetId() == req.Msg.GetWebhookId() })
	return connect.NewResponse(&agentsv1.DeleteWebhookResponse{}), nil
}

func (f *fakeServer) ListWebhookDeliveries(_ context.Context, req *connect.Request[agentsv1.ListWebhookDeliveriesRequest]) (*connect.Response[agentsv1.ListWebhookDeliveriesResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deliveriesOf = append(f.deliveriesOf, req.Msg.GetWebhookId())
	if f.err != nil {
		return nil, f.err
	}
	return connect.NewResponse(&agentsv1.ListWebhookDeliveriesResponse{Deliveries: f.deliveries[req.Msg.GetWebhookId()]}), nil
}

func (f *fakeServer) asked() (lists int, deliveriesOf []string, calls []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists, slices.Clone(f.deliveriesOf), slices.Clone(f.calls)
}

func newFake() *fakeServer {
	return &fakeServer{
		webhooks: []*agentsv1.Webhook{
			{Id: "wh_1", Owner: "alice", Url: "https://ops.example.com/agents", Events: []string{"run.stopped", "run.failed"},
				Status: agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED, Description: "the ops room", FailingSince: ts(-2 * time.Hour)},
			{Id: "wh_2", Owner: "alice", Url: "https://gone.example.com/hook", Events: []string{"call.waiting"}, ServerWide: true,
				Status: agentsv1.WebhookStatus_WEBHOOK_STATUS_FAILING, StatusReason: "every attempt failed for 3 days: HTTP 502"},
			{Id: "wh_3", Owner: "alice", Url: "http://10.0.0.7/in", Events: []string{"agent.changed"}, Status: agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED},
		},
		deliveries: map[string][]*agentsv1.WebhookDelivery{
			"wh_1": {
				{Id: "msg_2", WebhookId: "wh_1", Seq: 12, Kind: "session.failed", Status: agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING,
					Attempts: 2, LastStatusCode: 503, LastError: "HTTP 503", LastAttempt: ts(-18 * time.Second), NextAttempt: ts(42 * time.Second),
					Created: ts(-2 * time.Hour)},
				{Id: "msg_1", WebhookId: "wh_1", Seq: 7, Kind: "run.stopped", Status: agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED,
					Attempts: 1, LastStatusCode: 204, LastAttempt: ts(-3 * time.Hour), Created: ts(-3 * time.Hour), Delivered: ts(-3 * time.Hour)},
				{Id: "msg_0", WebhookId: "wh_1", Seq: 3, Kind: "run.failed", Status: agentsv1.DeliveryStatus_DELIVERY_STATUS_FAILED,
					Attempts: 9, LastError: "dial tcp: connection refused", Created: ts(-30 * time.Hour)},
			},
			"wh_3": {
				{Id: "msg_9", WebhookId: "wh_3", Seq: 20, Kind: "agents.changed", Status: agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED,
					Attempts: 1, LastStatusCode: 200, Created: ts(-5 * time.Minute), Delivered: ts(-5 * time.Minute)},
			},
		},
	}
}

// clock is a settable clock for the tab.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// loaded is a tab with the fake's webhooks listed, and its clock.
func loaded(t *testing.T, f *fakeServer) (*Webhooks, *clock) {
	t.Helper()
	c := &clock{t: start}
	m := New(t.Context(), f, theme.New(true), keys.Default(), c.now)
	m.Handle(m.Refresh()())
	if !m.Loaded() {
		t.Fatalf("not loaded: %v", m.list.Err)
	}
	return m, c
}

func press(m *Webhooks, k string) (tea.Cmd, bool) { return m.HandleKey(tabtest.Key(k)) }

// run runs cmd to its end; it returns the status lines the tab asked
// for.
func run(m *Webhooks, cmd tea.Cmd) []msgs.Status { return tabtest.Run(m.Handle, cmd) }

func screen(m *Webhooks) string { return ansi.Strip(m.Render(120, 30)) }

func TestTheListShowsEachWebhooksStateAndLastOutcome(t *testing.T) {
	t.Parallel()
	m, _ := loaded(t, newFake())
	out := screen(m)
	for _, want := range []string{
		"› ops.example.com/agents", "✗ 503", // its last attempt got a 503
		"gone.example.com/hook", "failing", // disabled by the server
		"10.0.0.7/in", "✓ 200", // delivered
		// The selected one in full; its last delivery is retried.
		"● enabled",
		"url       https://ops.example.com/agents",
		"events    run.stopped, run.failed",
		"sent      its owner's events",
		"about     the ops room",
		"failing   since 2h ago Mon 7 Dec 11:00 UTC",
		"last      session.failed pending (HTTP 503), last tried 18s ago",
		"owner     alice",
		"enter deliveries · p disable · ctrl+d delete",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the tab lacks %q:\n%s", want, out)
		}
	}
	press(m, "down")
	out = screen(m)
	for _, want := range []string{"✗ failing: disabled by the server", "why       every attempt failed for 3 days: HTTP 502", "sent      every owner's events",
		"last      nothing delivered yet", "p enable"} {
		if !strings.Contains(out, want) {
			t.Errorf("the second webhook lacks %q:\n%s", want, out)
		}
	}
}

func TestDisableAndEnableTheSelectedWebhook(t *testing.T) {
	t.Parallel()
	f := newFake()
	m, _ := loaded(t, f)
	cmd, used := press(m, "p")
	if !used || cmd == nil {
		t.Fatal("p did nothing")
	}
	// A second press while the first is under way sends nothing more.
	if again, _ := press(m, "p"); again != nil {
		t.Fatal("a second disable was sent while the first was under way")
	}
	if st := run(m, cmd); len(st) != 1 || st[0].Err != nil || st[0].Text != "disabled https://ops.example.com/agents" {
		t.Fatalf("status %+v", st)
	}
	if out := screen(m); !strings.Contains(out, "⏸ disabled") || !strings.Contains(out, "p enable") {
		t.Fatalf("disabled, the tab shows:\n%s", out)
	}
	// The one the server disabled is enabled again the same way.
	press(m, "down")
	cmd, _ = press(m, "p")
	if st := run(m, cmd); len(st) != 1 || st[0].Text != "enabled https://gone.example.com/hook" {
		t.Fatalf("status %+v", st)
	}
	if _, _, calls := f.asked(); !slices.Equal(calls, []string{"disable wh_1", "enable wh_2"}) {
		t.Fatalf("calls %v", calls)
	}

	// A refusal is told, and the webhook stays as it was.
	f.mu.Lock()
	f.err = connect.NewError(connect.CodePermissionDenied, errors.New("not yours"))
	f.mu.Unlock()
	cmd, _ = press(m, "p")
	st := run(m, cmd)
	if len(st) != 1 || st[0].Err == nil || !strings.Contains(st[0].Err.Error(), "disable wh_2: ") || !strings.Contains(st[0].Err.Error(), "not yours") {
		t.Fatalf("a refused disable: status %+v", st)
	}
	if m.List()[1].GetStatus() != agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED {
		t.Fatal("a refused disable disabled the webhook here")
	}
}

func TestDeleteAsksFirst(t *testing.T) {
	t.Parallel()
	f := newFake()
	m, _ := loaded(t, f)
	press(m, "down")
	if cmd, _ := press(m, "ctrl+d"); cmd != nil || !m.Confirming() {
		t.Fatalf("ctrl+d sent something (%v) or asked nothing", cmd)
	}
	if out := screen(m); !strings.Contains(out, "Delete the webhook to https://gone.example.com/hook and its delivery log? y/n") {
		t.Fatalf("no question:\n%s", out)
	}
	// Any other key waits for the answer; n keeps it.
	if cmd, used := press(m, "p"); cmd != nil || !used || !m.Confirming() {
		t.Fatal("p answered the question")
	}
	press(m, "n")
	if m.Confirming() {
		t.Fatal("n left the question open")
	}
	press(m, "ctrl+d")
	cmd, _ := press(m, "y")
	st := run(m, cmd)
	if len(st) != 1 || st[0].Text != "deleted https://gone.example.com/hook" {
		t.Fatalf("status %+v", st)
	}
	if _, _, calls := f.asked(); !slices.Equal(calls, []string{"delete wh_2"}) {
		t.Fatalf("calls %v", calls)
	}
	if len(m.List()) != 2 || strings.Contains(screen(m), "gone.example.com") {
		t.Fatalf("the deleted webhook is still listed:\n%s", screen(m))
	}
}

func TestTheDeliveriesOfTheSelectedWebhook(t *testing.T) {
	t.Parallel()
	f := newFake()
	m, _ := loaded(t, f)
	cmd, _ := press(m, "enter")
	if !m.ShowingDeliveries() {
		t.Fatal("enter did not open the deliveries")
	}
	run(m, cmd)
	out := screen(m)
	for _, want := range []string{
		"Deliveries to ops.example.com/agents ● enabled",
		"age  event               status     tries  last try  outcome",
		"2h  session.failed #12  pending        2  18s ago   HTTP 503 · next in 42s",
		"3h  run.stopped #7      delivered      1  3h ago    HTTP 204",
		// Its attempts were made before servers timed them.
		"1d  run.failed #3       failed         9  —         dial tcp: connection refused",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the deliveries lack %q:\n%s", want, out)
		}
	}
	// p works from here too; esc goes back to the list.
	cmd, _ = press(m, "p")
	run(m, cmd)
	if !strings.Contains(screen(m), "Deliveries to ops.example.com/agents ⏸ disabled") {
		t.Errorf("disabled from its deliveries:\n%s", screen(m))
	}
	press(m, "esc")
	if m.ShowingDeliveries() || !strings.Contains(screen(m), "› ops.example.com/agents") {
		t.Fatalf("esc: %s", screen(m))
	}
}

// The tab reads the webhooks (and the open deliveries) again once
// PollEvery passed, and after a gap in the event stream; not sooner.
func TestPollReadsAgainOnlyWhenDue(t *testing.T) {
	t.Parallel()
	f := newFake()
	m, c := loaded(t, f)
	if cmd := m.Poll(); cmd != nil {
		t.Fatal("Poll asked again at once")
	}
	run(m, func() tea.Msg { cmd, _ := press(m, "enter"); return cmd() })
	f.mu.Lock()
	f.deliveries["wh_1"][0].Status, f.deliveries["wh_1"][0].Attempts = agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED, 3
	f.deliveries["wh_1"][0].LastStatusCode, f.deliveries["wh_1"][0].LastError = 200, ""
	f.deliveries["wh_1"][0].LastAttempt, f.deliveries["wh_1"][0].Delivered = ts(PollEvery-2*time.Second), ts(PollEvery-2*time.Second)
	f.mu.Unlock()
	c.t = c.t.Add(PollEvery)
	run(m, m.Poll())
	lists, of, _ := f.asked()
	if lists != 2 || !slices.Equal(of, []string{"wh_1", "wh_1"}) {
		t.Fatalf("after PollEvery: %d lists, deliveries of %v; want 2 and wh_1 twice", lists, of)
	}
	if out := screen(m); !strings.Contains(out, "session.failed #12  delivered      3  just now  HTTP 200") {
		t.Errorf("the deliveries did not catch up:\n%s", out)
	}
	if m.Poll() != nil {
		t.Fatal("Poll asked again right after")
	}
	run(m, m.Handle(msgs.Snapshot{}))
	if lists, _, _ := f.asked(); lists != 3 {
		t.Fatalf("after a snapshot: %d lists, want 3", lists)
	}
}

func TestAServerWithoutWebhooksSaysSo(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.err = connect.NewError(connect.CodeUnimplemented, errors.New("no webhooks"))
	m := New(t.Context(), f, theme.New(true), keys.Default(), func() time.Time { return start })
	m.Handle(m.Refresh()())
	if out := screen(m); !strings.Contains(out, "This server keeps no webhooks.") {
		t.Fatalf("the tab shows:\n%s", out)
	}
	f.err = nil
	f.webhooks = nil
	m.Handle(m.Refresh()())
	if out := screen(m); !strings.Contains(out, "No webhooks: register one with `agents webhooks create`") {
		t.Fatalf("the tab shows:\n%s", out)
	}
}

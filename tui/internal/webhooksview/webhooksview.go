// Package webhooksview is the Webhooks tab: the caller's webhooks (an
// admin's: its own, as the web page lists them), each with whether it is
// sent events and how its last delivery went, the selected one in full
// beside them; a webhook is enabled, disabled or deleted from here, and
// its deliveries are listed, newest first.
//
// Deliveries happen after the events that cause them, in the server's
// own time, and no event says one was made: the tab reads the webhooks
// again while it is shown (Poll), as the web page does, and after a gap
// in the event stream.
package webhooksview

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
	"github.com/agents-os/agents/tui/internal/listing"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
	"github.com/agents-os/agents/tui/internal/units"
)

// Client is what the tab asks of the server, as the generated Connect
// client of the webhook service asks it.
type Client interface {
	ListWebhooks(context.Context, *connect.Request[agentsv1.ListWebhooksRequest]) (*connect.Response[agentsv1.ListWebhooksResponse], error)
	UpdateWebhook(context.Context, *connect.Request[agentsv1.UpdateWebhookRequest]) (*connect.Response[agentsv1.UpdateWebhookResponse], error)
	DeleteWebhook(context.Context, *connect.Request[agentsv1.DeleteWebhookRequest]) (*connect.Response[agentsv1.DeleteWebhookResponse], error)
	ListWebhookDeliveries(context.Context, *connect.Request[agentsv1.ListWebhookDeliveriesRequest]) (*connect.Response[agentsv1.ListWebhookDeliveriesResponse], error)
}

// Reply is the answer to a command of the tab: the shell hands it to the
// tab and to no other component.
type Reply interface {
	// reply keeps the replies to this package's own types.
	reply()
}

// Loaded is the answer of Refresh.
type Loaded struct {
	Webhooks []*agentsv1.Webhook
	Err      error
}

// Toggled is the answer of an enable or a disable: the webhook as it is
// now.
type Toggled struct {
	ID      string
	Webhook *agentsv1.Webhook
	Err     error
}

// Deleted is the answer of a confirmed delete.
type Deleted struct {
	ID, URL string
	Err     error
}

// DeliveriesLoaded is the answer of a listing of a webhook's deliveries.
type DeliveriesLoaded struct {
	ID         string
	Deliveries []*agentsv1.WebhookDelivery
	Err        error
}

func (Loaded) reply()           {}
func (Toggled) reply()          {}
func (Deleted) reply()          {}
func (DeliveriesLoaded) reply() {}

// deliveriesLimit is how many deliveries the tab lists, newest first.
const deliveriesLimit = 100

// PollEvery is how often Poll reads the webhooks again: as often as the
// web page's list does.
const PollEvery = 15 * time.Second

// Webhooks is the Webhooks tab.
type Webhooks struct {
	ctx context.Context
	c   Client
	th  *theme.Theme
	km  *keys.Map
	now func() time.Time

	list listing.List[*agentsv1.Webhook]
	// asked is when the webhooks were last asked for, which Poll counts
	// from.
	asked time.Time
	// toggling are the webhooks whose enable or disable is under way.
	toggling map[string]bool
	// confirm is the webhook whose delete waits for a yes or a no.
	confirm *agentsv1.Webhook

	// deliveries is the list of one webhook's deliveries, while it is
	// open.
	deliveries *listing.Sub[*agentsv1.WebhookDelivery]
}

// New returns an empty tab; Refresh fills it. now is the clock ages are
// counted with.
func New(ctx context.Context, c Client, th *theme.Theme, km *keys.Map, now func() time.Time) *Webhooks {
	return &Webhooks{ctx: ctx, c: c, th: th, km: km, now: now, toggling: map[string]bool{}}
}

// Refresh lists the webhooks again.
func (m *Webhooks) Refresh() tea.Cmd {
	m.asked = m.now()
	ctx, c := m.ctx, m.c
	return func() tea.Msg {
		res, err := c.ListWebhooks(ctx, connect.NewRequest(&agentsv1.ListWebhooksRequest{}))
		if err != nil {
			return Loaded{Err: err}
		}
		return Loaded{Webhooks: res.Msg.GetWebhooks()}
	}
}

// Poll reads the webhooks again, and the open deliveries, once PollEvery
// passed since they were last asked for; the shell calls it while the
// tab is shown.
func (m *Webhooks) Poll() tea.Cmd {
	if m.list.None || m.now().Sub(m.asked) < PollEvery {
		return nil
	}
	return m.refetch()
}

// listDeliveries lists a webhook's deliveries.
func (m *Webhooks) listDeliveries(id string) tea.Cmd {
	ctx, c := m.ctx, m.c
	return func() tea.Msg {
		res, err := c.ListWebhookDeliveries(ctx, connect.NewRequest(&agentsv1.ListWebhookDeliveriesRequest{WebhookId: id, Limit: deliveriesLimit}))
		if err != nil {
			return DeliveriesLoaded{ID: id, Err: err}
		}
		return DeliveriesLoaded{ID: id, Deliveries: res.Msg.GetDeliveries()}
	}
}

// toggle disables an enabled webhook and enables a disabled one (one the
// server disabled for failing too).
func (m *Webhooks) toggle(w *agentsv1.Webhook) tea.Cmd {
	id := w.GetId()
	if m.toggling[id] {
		return nil
	}
	m.toggling[id] = true
	ctx, c, enable := m.ctx, m.c, !enabled(w)
	return func() tea.Msg {
		res, err := c.UpdateWebhook(ctx, connect.NewRequest(&agentsv1.UpdateWebhookRequest{WebhookId: id, Enabled: &enable}))
		if err != nil {
			return Toggled{ID: id, Err: err}
		}
		return Toggled{ID: id, Webhook: res.Msg.GetWebhook()}
	}
}

// delete asks the server to delete a webhook and its delivery log.
func (m *Webhooks) delete(w *agentsv1.Webhook) tea.Cmd {
	ctx, c, id, url := m.ctx, m.c, w.GetId(), w.GetUrl()
	return func() tea.Msg {
		_, err := c.DeleteWebhook(ctx, connect.NewRequest(&agentsv1.DeleteWebhookRequest{WebhookId: id}))
		return Deleted{ID: id, URL: url, Err: err}
	}
}

// Loaded reports whether the webhooks were listed at least once.
func (m *Webhooks) Loaded() bool { return m.list.Loaded }

// List is the webhooks as last listed, oldest first.
func (m *Webhooks) List() []*agentsv1.Webhook { return m.list.Items }

// ShowingDeliveries reports whether a webhook's deliveries are open.
func (m *Webhooks) ShowingDeliveries() bool { return m.deliveries != nil }

// Confirming reports whether a delete waits for its answer, which takes
// letters (y, n) as a text field does.
func (m *Webhooks) Confirming() bool { return m.confirm != nil }

// Handle takes the tab's answers, and lists again after a gap in the
// event stream.
func (m *Webhooks) Handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case Loaded:
		m.list.Take(msg.Webhooks, msg.Err)
	case Toggled:
		delete(m.toggling, msg.ID)
		if msg.Err != nil {
			return msgs.Say("", fmt.Errorf("%s %s: %w", verb(m.list.ByID(msg.ID)), msg.ID, client.Describe(msg.Err)))
		}
		m.list.Replace(msg.Webhook)
		if enabled(msg.Webhook) {
			return msgs.Say("enabled "+msg.Webhook.GetUrl(), nil)
		}
		return msgs.Say("disabled "+msg.Webhook.GetUrl(), nil)
	case Deleted:
		if msg.Err != nil {
			return msgs.Say("", fmt.Errorf("delete %s: %w", msg.URL, client.Describe(msg.Err)))
		}
		m.list.Remove(msg.ID)
		if m.deliveries != nil && m.deliveries.ID == msg.ID {
			m.deliveries = nil
		}
		return tea.Batch(msgs.Say("deleted "+msg.URL, nil), m.Refresh())
	case DeliveriesLoaded:
		m.deliveries.Take(msg.ID, msg.Deliveries, msg.Err)
	case msgs.Snapshot:
		return m.refetch()
	}
	return nil
}

// refetch lists the webhooks again, and the open deliveries.
func (m *Webhooks) refetch() tea.Cmd {
	cmds := []tea.Cmd{m.Refresh()}
	if m.deliveries != nil {
		cmds = append(cmds, m.listDeliveries(m.deliveries.ID))
	}
	return tea.Batch(cmds...)
}

// HandleKey moves through the webhooks or the deliveries, enables or
// disables the selected webhook, deletes it once confirmed, opens its
// deliveries; it reports whether it used the key.
func (m *Webhooks) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	km := m.km
	if w := m.confirm; w != nil {
		switch {
		case msg.String() == "y" || key.Matches(msg, km.Get(keys.Open)):
			m.confirm = nil
			return m.delete(w), true
		case msg.String() == "n" || key.Matches(msg, km.Get(keys.Back)):
			m.confirm = nil
		}
		return nil, true
	}
	if d := m.deliveries; d != nil {
		switch {
		case key.Matches(msg, km.Get(keys.Back)):
			m.deliveries = nil
		case key.Matches(msg, km.Get(keys.Up)):
			d.Move(-1)
		case key.Matches(msg, km.Get(keys.Down)):
			d.Move(1)
		case key.Matches(msg, km.Get(keys.ToggleWebhook)):
			if w := m.list.ByID(d.ID); w != nil {
				return m.toggle(w), true
			}
		default:
			return nil, false
		}
		return nil, true
	}
	switch {
	case key.Matches(msg, km.Get(keys.Up)):
		m.list.Move(-1)
	case key.Matches(msg, km.Get(keys.Down)):
		m.list.Move(1)
	case key.Matches(msg, km.Get(keys.ToggleWebhook)):
		if w := m.list.Selected(); w != nil {
			return m.toggle(w), true
		}
	case key.Matches(msg, km.Get(keys.Delete)):
		m.confirm = m.list.Selected()
	case key.Matches(msg, km.Get(keys.Open)):
		if w := m.list.Selected(); w != nil {
			m.deliveries = listing.Open[*agentsv1.WebhookDelivery](w.GetId())
			return m.listDeliveries(w.GetId()), true
		}
	default:
		return nil, false
	}
	return nil, true
}

// Render draws the tab in w×h cells: the webhooks on the left, the
// selected one on the right, the delete's question under them; or the
// deliveries of the one opened.
func (m *Webhooks) Render(w, h int) string {
	st := m.th.App
	if gate, ok := m.list.Gate(st, "webhooks", w, h); ok {
		return gate
	}
	if m.deliveries != nil {
		return m.renderDeliveries(w, h)
	}
	foot := ""
	if m.confirm != nil {
		foot = st.Prompt.Render(fmt.Sprintf("Delete the webhook to %s and its delivery log? y/n", m.confirm.GetUrl()))
	}
	return m.list.Render(st, listing.Split[*agentsv1.Webhook]{
		Noun:     "webhooks",
		Empty:    "No webhooks: register one with `agents webhooks create`, the API or the web app.",
		Row:      func(x *agentsv1.Webhook) (string, layout.Seg) { return Address(x.GetUrl()), m.mark(x) },
		Describe: m.describe,
		Foot:     foot,
	}, w, h)
}

// mark is what the list says of a webhook at its row's right: how its
// last delivery went, or that it is not sent events.
func (m *Webhooks) mark(x *agentsv1.Webhook) layout.Seg {
	st := m.th.App
	switch x.GetStatus() {
	case agentsv1.WebhookStatus_WEBHOOK_STATUS_FAILING:
		return layout.Seg{Text: " failing", Style: st.Failed}
	case agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED:
		text, ok := Mark(x.GetLastDelivery())
		style := st.Connected
		if !ok {
			style = st.Failed
		}
		if text == "" {
			text, style = "—", st.Muted
		}
		return layout.Seg{Text: " " + text, Style: style}
	}
	return layout.Seg{Text: " disabled", Style: st.Paused}
}

// describe is a webhook in full, in w cells: where it is sent, what,
// whose events, why it is disabled, since when it fails, its last
// delivery.
func (m *Webhooks) describe(x *agentsv1.Webhook, w int) string {
	if x == nil {
		return ""
	}
	st := m.th.App
	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\n") }
	field := func(label, value string) { line(st.Muted.Render(fmt.Sprintf("%-9s", label)) + " " + value) }
	wrapped := func(label, value string) {
		for i, l := range strings.Split(ansi.Wrap(value, max(1, w-10), ""), "\n") {
			if i > 0 {
				label = ""
			}
			field(label, l)
		}
	}
	now := m.now()

	line(state(st, x))
	wrapped("url", x.GetUrl())
	wrapped("events", strings.Join(x.GetEvents(), ", "))
	field("sent", Scope(x))
	if x.GetDescription() != "" {
		wrapped("about", x.GetDescription())
	}
	if x.GetStatus() == agentsv1.WebhookStatus_WEBHOOK_STATUS_FAILING && x.GetStatusReason() != "" {
		wrapped("why", x.GetStatusReason())
	}
	if f := x.GetFailingSince(); f != nil {
		at := f.AsTime()
		field("failing", st.Failed.Render("since "+ago(now.Sub(at)))+" "+st.Muted.Render(at.UTC().Format("Mon 2 Jan 15:04 UTC")))
	}
	if d := x.GetLastDelivery(); d != nil {
		wrapped("last", Summary(d, now))
	} else {
		field("last", st.Muted.Render("nothing delivered yet"))
	}
	if x.GetOwner() != "" {
		field("owner", x.GetOwner())
	}
	line("")
	key := func(a keys.Action) string { return m.km.Get(a).Help().Key }
	line(st.Muted.Render(key(keys.Open) + " deliveries · " + key(keys.ToggleWebhook) + " " + verb(x) + " · " + key(keys.Delete) + " delete"))
	return strings.TrimSuffix(b.String(), "\n")
}

// renderDeliveries is the open webhook's deliveries, newest first: when
// each was queued, its event, where it stands, its attempts, when the
// last one was made and what it got, and when the next is due.
func (m *Webhooks) renderDeliveries(w, h int) string {
	st := m.th.App
	d := m.deliveries
	title := d.ID
	x := m.list.ByID(d.ID)
	if x != nil {
		title = Address(x.GetUrl())
	}
	lines := []string{st.Heading.Render("Deliveries to ") + st.Title.Bold(true).Render(title)}
	if x != nil {
		lines[0] += " " + state(st, x)
	}
	note, ready := d.Note(st, "deliveries", "No delivery yet: it is sent the events it names from its creation on.")
	if note != "" {
		lines = append(lines, note)
	}
	if !ready {
		return layout.Fit(strings.Join(lines, "\n"), w, h)
	}
	now := m.now()
	// Each column is as wide as its longest cell; the outcome takes the
	// rest.
	type row struct{ age, event, status, tries, tried, outcome string }
	head := row{"age", "event", "status", "tries", "last try", "outcome"}
	rows := make([]row, len(d.Items))
	ageW, eventW, statusW, triesW, triedW := len(head.age), len(head.event), len(head.status), len(head.tries), len(head.tried)
	for i, x := range d.Items {
		r := row{age: units.Age(now.Sub(x.GetCreated().AsTime())), event: fmt.Sprintf("%s #%d", x.GetKind(), x.GetSeq()),
			status: client.DeliveryStatusName(x.GetStatus()), tries: fmt.Sprint(x.GetAttempts()), tried: "—", outcome: Outcome(x)}
		if last := x.GetLastAttempt(); last != nil {
			r.tried = ago(now.Sub(last.AsTime()))
		}
		if next := x.GetNextAttempt(); next != nil && x.GetStatus() == agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING {
			r.outcome += " · next " + until(next.AsTime().Sub(now))
		}
		rows[i] = r
		ageW, eventW = max(ageW, ansi.StringWidth(r.age)), max(eventW, ansi.StringWidth(r.event))
		statusW, triesW = max(statusW, ansi.StringWidth(r.status)), max(triesW, ansi.StringWidth(r.tries))
		triedW = max(triedW, ansi.StringWidth(r.tried))
	}
	// pad fills a cell to w cells: fmt counts bytes, and "—" is three.
	pad := func(s string, w int) string { return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s))) }
	columns := func(r row) string {
		return fmt.Sprintf("%*s  %-*s  %-*s  %*s  %s  %s", ageW, r.age, eventW, r.event, statusW, r.status, triesW, r.tries, pad(r.tried, triedW), r.outcome)
	}
	lines = append(lines, st.Muted.Render("  "+columns(head)))
	lines = append(lines, d.Rows(st, func(i int) (string, lipgloss.Style) {
		style := st.Title
		switch x := d.Items[i]; x.GetStatus() {
		case agentsv1.DeliveryStatus_DELIVERY_STATUS_FAILED:
			style = st.Failed
		case agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING:
			if x.GetAttempts() > 0 {
				style = st.Waiting
			}
		}
		return columns(rows[i]), style
	}, w, h-len(lines))...)
	return layout.Fit(strings.Join(lines, "\n"), w, h)
}

func enabled(w *agentsv1.Webhook) bool {
	return w.GetStatus() == agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED
}

// state says whether a webhook is sent events, in a word beside a mark.
func state(st theme.AppStyles, w *agentsv1.Webhook) string {
	switch w.GetStatus() {
	case agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED:
		return st.Connected.Render("● enabled")
	case agentsv1.WebhookStatus_WEBHOOK_STATUS_FAILING:
		return st.Failed.Render("✗ failing: disabled by the server")
	}
	return st.Paused.Render("⏸ disabled")
}

// verb is what the toggle key does to w.
func verb(w *agentsv1.Webhook) string {
	if w != nil && enabled(w) {
		return "disable"
	}
	return "enable"
}

// Address is a webhook's URL without its scheme, which the list has no
// room for: "ops.example.com/agents".
func Address(url string) string {
	for _, scheme := range []string{"https://", "http://"} {
		if rest, ok := strings.CutPrefix(url, scheme); ok {
			return rest
		}
	}
	return url
}

// Scope says whose events a webhook is sent.
func Scope(w *agentsv1.Webhook) string {
	if w.GetServerWide() {
		return "every owner's events"
	}
	return "its owner's events"
}

// Outcome is what a delivery's last attempt got: the endpoint's HTTP
// status, what went wrong, or that none was made yet.
func Outcome(d *agentsv1.WebhookDelivery) string {
	if d.GetAttempts() == 0 {
		return "not attempted yet"
	}
	code := ""
	if d.GetLastStatusCode() != 0 {
		code = fmt.Sprintf("HTTP %d", d.GetLastStatusCode())
	}
	switch e := d.GetLastError(); {
	case e == "":
		if code == "" {
			return "no answer"
		}
		return code
	case code != "" && !strings.Contains(e, fmt.Sprint(d.GetLastStatusCode())):
		// The server's error may name the status itself ("HTTP 500").
		return code + ": " + e
	default:
		return e
	}
}

// Summary is a delivery in one line: "run.stopped delivered (HTTP 204),
// 2m ago"; "session.failed pending (HTTP 503), last tried 3m ago" while
// it is retried, or when it was queued before any attempt.
func Summary(d *agentsv1.WebhookDelivery, now time.Time) string {
	when := ago(now.Sub(d.GetCreated().AsTime()))
	switch {
	case d.GetDelivered() != nil:
		when = ago(now.Sub(d.GetDelivered().AsTime()))
	case d.GetLastAttempt() != nil:
		when = "last tried " + ago(now.Sub(d.GetLastAttempt().AsTime()))
	}
	return fmt.Sprintf("%s %s (%s), %s", d.GetKind(), client.DeliveryStatusName(d.GetStatus()), Outcome(d), when)
}

// Mark is a delivery in a few cells, for the list: the HTTP status its
// last attempt got ("204"), "error" when nothing answered, "pending"
// before any attempt; ok says whether it went well. "" for no delivery.
func Mark(d *agentsv1.WebhookDelivery) (text string, ok bool) {
	switch {
	case d == nil:
		return "", true
	case d.GetStatus() == agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED:
		return "✓ " + fmt.Sprint(d.GetLastStatusCode()), true
	case d.GetAttempts() == 0:
		return "pending", true
	case d.GetLastStatusCode() != 0:
		return "✗ " + fmt.Sprint(d.GetLastStatusCode()), false
	}
	return "✗ error", false
}

// ago is how long ago a time was: "42s ago", "3h ago"; "just now" for
// the last few seconds.
func ago(d time.Duration) string {
	if age := units.Age(d); age != "now" {
		return age + " ago"
	}
	return "just now"
}

// until is how far off a time is: "in 42s", "in 5m"; "due" once it
// passed.
func until(d time.Duration) string {
	switch {
	case d < time.Second:
		return "due"
	case d < time.Minute:
		return fmt.Sprintf("in %ds", int(d/time.Second))
	}
	return "in " + units.Age(d)
}

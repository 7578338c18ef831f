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
	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/cursor"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
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

	list   []*agentsv1.Webhook
	cur    cursor.Cursor
	loaded bool
	err    error
	// none says the server keeps no webhooks (it does not serve them).
	none bool
	// asked is when the webhooks were last asked for, which Poll counts
	// from.
	asked time.Time
	// toggling are the webhooks whose enable or disable is under way.
	toggling map[string]bool
	// confirm is the webhook whose delete waits for a yes or a no.
	confirm *agentsv1.Webhook

	// deliveries is the list of one webhook's deliveries, while it is
	// open.
	deliveries *deliveries
}

// deliveries is the open list of a webhook's deliveries.
type deliveries struct {
	id     string
	list   []*agentsv1.WebhookDelivery
	cur    cursor.Cursor
	loaded bool
	err    error
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
	if m.none || m.now().Sub(m.asked) < PollEvery {
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
func (m *Webhooks) Loaded() bool { return m.loaded }

// List is the webhooks as last listed, oldest first.
func (m *Webhooks) List() []*agentsv1.Webhook { return m.list }

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
		if msg.Err != nil {
			m.none = connect.CodeOf(msg.Err) == connect.CodeUnimplemented
			m.err = client.Describe(msg.Err)
			return nil
		}
		m.setList(msg.Webhooks)
		m.err, m.none, m.loaded = nil, false, true
	case Toggled:
		delete(m.toggling, msg.ID)
		if msg.Err != nil {
			return status("", fmt.Errorf("%s %s: %w", verb(m.byID(msg.ID)), msg.ID, client.Describe(msg.Err)))
		}
		m.replace(msg.Webhook)
		if enabled(msg.Webhook) {
			return status("enabled "+msg.Webhook.GetUrl(), nil)
		}
		return status("disabled "+msg.Webhook.GetUrl(), nil)
	case Deleted:
		if msg.Err != nil {
			return status("", fmt.Errorf("delete %s: %w", msg.URL, client.Describe(msg.Err)))
		}
		m.remove(msg.ID)
		return tea.Batch(status("deleted "+msg.URL, nil), m.Refresh())
	case DeliveriesLoaded:
		d := m.deliveries
		if d == nil || d.id != msg.ID {
			return nil
		}
		if msg.Err != nil {
			d.err = client.Describe(msg.Err)
			return nil
		}
		d.list, d.err, d.loaded = msg.Deliveries, nil, true
		d.cur.Set(d.cur.Index(), len(d.list))
	case msgs.Snapshot:
		return m.refetch()
	}
	return nil
}

// refetch lists the webhooks again, and the open deliveries.
func (m *Webhooks) refetch() tea.Cmd {
	cmds := []tea.Cmd{m.Refresh()}
	if m.deliveries != nil {
		cmds = append(cmds, m.listDeliveries(m.deliveries.id))
	}
	return tea.Batch(cmds...)
}

// setList takes a new listing, keeping the selection on its webhook.
func (m *Webhooks) setList(list []*agentsv1.Webhook) {
	selected := ""
	if w := m.selected(); w != nil {
		selected = w.GetId()
	}
	m.list = list
	at := m.cur.Index()
	for i, w := range list {
		if w.GetId() == selected {
			at = i
		}
	}
	m.cur.Set(at, len(m.list))
}

// replace puts a webhook's new state in the list.
func (m *Webhooks) replace(w *agentsv1.Webhook) {
	for i, x := range m.list {
		if x.GetId() == w.GetId() {
			m.list[i] = w
		}
	}
}

// remove takes a deleted webhook off the list at once, and closes its
// deliveries.
func (m *Webhooks) remove(id string) {
	list := m.list[:0:0]
	for _, w := range m.list {
		if w.GetId() != id {
			list = append(list, w)
		}
	}
	m.list = list
	m.cur.Set(m.cur.Index(), len(m.list))
	if m.deliveries != nil && m.deliveries.id == id {
		m.deliveries = nil
	}
}

func (m *Webhooks) byID(id string) *agentsv1.Webhook {
	for _, w := range m.list {
		if w.GetId() == id {
			return w
		}
	}
	return nil
}

func (m *Webhooks) selected() *agentsv1.Webhook {
	if i := m.cur.Index(); i < len(m.list) {
		return m.list[i]
	}
	return nil
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
			d.cur.Move(-1, len(d.list))
		case key.Matches(msg, km.Get(keys.Down)):
			d.cur.Move(1, len(d.list))
		case key.Matches(msg, km.Get(keys.ToggleWebhook)):
			if w := m.byID(d.id); w != nil {
				return m.toggle(w), true
			}
		default:
			return nil, false
		}
		return nil, true
	}
	switch {
	case key.Matches(msg, km.Get(keys.Up)):
		m.cur.Move(-1, len(m.list))
	case key.Matches(msg, km.Get(keys.Down)):
		m.cur.Move(1, len(m.list))
	case key.Matches(msg, km.Get(keys.ToggleWebhook)):
		if w := m.selected(); w != nil {
			return m.toggle(w), true
		}
	case key.Matches(msg, km.Get(keys.Delete)):
		m.confirm = m.selected()
	case key.Matches(msg, km.Get(keys.Open)):
		if w := m.selected(); w != nil {
			m.deliveries = &deliveries{id: w.GetId()}
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
	switch {
	case m.none:
		return layout.Fit(st.Muted.Render("This server keeps no webhooks."), w, h)
	case !m.loaded && m.err != nil:
		return layout.Fit(st.Error.Render("cannot list webhooks: "+m.err.Error()), w, h)
	case !m.loaded:
		return layout.Fit(st.Muted.Render("loading webhooks…"), w, h)
	case m.deliveries != nil:
		return m.renderDeliveries(w, h)
	}
	var top []string
	if m.err != nil {
		top = append(top, st.Error.Render("cannot list webhooks: "+m.err.Error()))
	}
	if len(m.list) == 0 {
		top = append(top, st.Muted.Render("No webhooks: register one with `agents webhooks create`, the API or the web app."))
		return layout.Fit(strings.Join(top, "\n"), w, h)
	}
	bodyH := h - len(top)
	foot := ""
	if m.confirm != nil {
		foot = st.Prompt.Render(fmt.Sprintf("Delete the webhook to %s and its delivery log? y/n", m.confirm.GetUrl()))
		bodyH--
	}
	bodyH = max(0, bodyH)
	listW := min(44, max(20, w*2/5))
	detailW := max(0, w-listW-3)
	list := m.renderList(listW, bodyH)
	detail := strings.Split(layout.Fit(m.describe(m.selected(), detailW), detailW, bodyH), "\n")
	sep := st.Muted.Render(" │ ")
	lines := top
	for i := range bodyH {
		lines = append(lines, list[i]+sep+detail[i])
	}
	if foot != "" {
		lines = append(lines, layout.Pad(foot, w))
	}
	return layout.Fit(strings.Join(lines, "\n"), w, h)
}

func (m *Webhooks) renderList(w, h int) []string {
	st := m.th.App
	from, to := m.cur.Window(h, len(m.list))
	out := make([]string, 0, h)
	for i := from; i < to; i++ {
		x := m.list[i]
		pointer, bg := "  ", st.Selected.GetBackground()
		if i != m.cur.Index() {
			bg = nil
		} else {
			pointer = "› "
		}
		left := []layout.Seg{{Text: pointer, Style: st.Heading}, {Text: Address(x.GetUrl()), Style: st.Title}}
		var right []layout.Seg
		switch x.GetStatus() {
		case agentsv1.WebhookStatus_WEBHOOK_STATUS_FAILING:
			right = append(right, layout.Seg{Text: " failing", Style: st.Failed})
		case agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED:
			text, ok := Mark(x.GetLastDelivery())
			style := st.Connected
			if !ok {
				style = st.Failed
			}
			if text == "" {
				text, style = "—", st.Muted
			}
			right = append(right, layout.Seg{Text: " " + text, Style: style})
		default:
			right = append(right, layout.Seg{Text: " disabled", Style: st.Paused})
		}
		out = append(out, layout.Row(w, left, right, bg))
	}
	for len(out) < h {
		out = append(out, strings.Repeat(" ", w))
	}
	return out
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
		field("failing", st.Failed.Render("since "+units.Age(now.Sub(at))+" ago")+" "+st.Muted.Render(at.UTC().Format("Mon 2 Jan 15:04 UTC")))
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
// each was queued, its event, where it stands, its attempts and what the
// last one got, or when the next is due.
func (m *Webhooks) renderDeliveries(w, h int) string {
	st := m.th.App
	d := m.deliveries
	title := d.id
	x := m.byID(d.id)
	if x != nil {
		title = Address(x.GetUrl())
	}
	lines := []string{st.Heading.Render("Deliveries to ") + st.Title.Bold(true).Render(title)}
	if x != nil {
		lines[0] += " " + state(st, x)
	}
	switch {
	case d.err != nil:
		lines = append(lines, st.Error.Render("cannot list deliveries: "+d.err.Error()))
	case !d.loaded:
		lines = append(lines, st.Muted.Render("loading deliveries…"))
	case len(d.list) == 0:
		lines = append(lines, st.Muted.Render("No delivery yet: it is sent the events it names from its creation on."))
	}
	if !d.loaded || len(d.list) == 0 {
		return layout.Fit(strings.Join(lines, "\n"), w, h)
	}
	now := m.now()
	// Each column is as wide as its longest cell; the outcome takes the
	// rest.
	type row struct{ age, event, status, tries, outcome string }
	head := row{"age", "event", "status", "tries", "outcome"}
	rows := make([]row, len(d.list))
	ageW, eventW, statusW, triesW := len(head.age), len(head.event), len(head.status), len(head.tries)
	for i, x := range d.list {
		r := row{age: units.Age(now.Sub(x.GetCreated().AsTime())), event: fmt.Sprintf("%s #%d", x.GetKind(), x.GetSeq()),
			status: Status(x.GetStatus()), tries: fmt.Sprint(x.GetAttempts()), outcome: Outcome(x)}
		if next := x.GetNextAttempt(); next != nil && x.GetStatus() == agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING {
			r.outcome += " · next " + until(next.AsTime().Sub(now))
		}
		rows[i] = r
		ageW, eventW = max(ageW, ansi.StringWidth(r.age)), max(eventW, ansi.StringWidth(r.event))
		statusW, triesW = max(statusW, ansi.StringWidth(r.status)), max(triesW, ansi.StringWidth(r.tries))
	}
	columns := func(r row) string {
		return fmt.Sprintf("%*s  %-*s  %-*s  %*s  %s", ageW, r.age, eventW, r.event, statusW, r.status, triesW, r.tries, r.outcome)
	}
	lines = append(lines, st.Muted.Render("  "+columns(head)))
	bodyH := h - len(lines)
	from, to := d.cur.Window(bodyH, len(d.list))
	for i := from; i < to; i++ {
		bg, pointer := st.Selected.GetBackground(), "› "
		if i != d.cur.Index() {
			bg, pointer = nil, "  "
		}
		style := st.Title
		switch d.list[i].GetStatus() {
		case agentsv1.DeliveryStatus_DELIVERY_STATUS_FAILED:
			style = st.Failed
		case agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING:
			if d.list[i].GetAttempts() > 0 {
				style = st.Waiting
			}
		}
		lines = append(lines, layout.Row(w, []layout.Seg{{Text: pointer, Style: st.Heading}, {Text: columns(rows[i]), Style: style}}, nil, bg))
	}
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

// Status is where a delivery stands, in a word.
func Status(s agentsv1.DeliveryStatus) string {
	switch s {
	case agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING:
		return "pending"
	case agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED:
		return "delivered"
	case agentsv1.DeliveryStatus_DELIVERY_STATUS_FAILED:
		return "failed"
	}
	return "unknown"
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
// 2m ago", or pending with its last attempt's outcome.
func Summary(d *agentsv1.WebhookDelivery, now time.Time) string {
	at := d.GetCreated()
	if d.GetDelivered() != nil {
		at = d.GetDelivered()
	}
	return fmt.Sprintf("%s %s (%s), %s ago", d.GetKind(), Status(d.GetStatus()), Outcome(d), units.Age(now.Sub(at.AsTime())))
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

func status(text string, err error) tea.Cmd {
	return func() tea.Msg { return msgs.Status{Text: text, Err: err} }
}

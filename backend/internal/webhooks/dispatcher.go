package webhooks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
)

// Options configure a Dispatcher; zero fields take the defaults below.
type Options struct {
	Store store.Webhooks
	Log   *slog.Logger
	// Policy says which addresses endpoints may have.
	Policy Policy
	// Timeout bounds one attempt: connecting, sending and the answer's
	// headers.
	Timeout time.Duration
	// Concurrency is the most attempts under way at once to one
	// endpoint, on this server.
	Concurrency int
	// RetryFor is how long a delivery is retried before it fails.
	RetryFor time.Duration
	// RetryBase is the wait after the first failed attempt; it doubles
	// with each further one, up to RetryMax, less a random part of up to
	// half of it (jitter), so endpoints coming back are not hit by every
	// retry at once.
	RetryBase, RetryMax time.Duration
	// DisableAfter is how long an endpoint may fail continuously before
	// it is disabled.
	DisableAfter time.Duration
	// Poll is the longest the store goes unread when nothing else wakes
	// the dispatcher (see Run).
	Poll time.Duration
	// Seq, when set, is the newest event position the server knows
	// (the hub's): a change starts a fan-out at once.
	Seq func() uint64
	// Now is the clock (tests).
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultConcurrency  = 4
	DefaultRetryFor     = 24 * time.Hour
	DefaultRetryBase    = 5 * time.Second
	DefaultRetryMax     = time.Hour
	DefaultDisableAfter = 72 * time.Hour
	DefaultPoll         = 30 * time.Second
)

// Limits of the dispatcher's work.
const (
	// fanOutBatch is the most events one fan-out transaction reads.
	fanOutBatch = 256
	// maxInFlight bounds the attempts under way on one server.
	maxInFlight = 64
	// claimMargin is how much longer than twice an attempt's timeout a
	// claim holds, so no other server takes a delivery whose attempt is
	// still under way (or being recorded); a server that died mid-attempt
	// leaves its deliveries to others once their claims run out.
	claimMargin = 5 * time.Second
	// keepDeliveries is how long ended deliveries stay in the log.
	keepDeliveries = 7 * 24 * time.Hour
	// pruneEvery is how often the log is pruned.
	pruneEvery = time.Hour
	// tick is how often the dispatcher reads the server's event position.
	tick = 100 * time.Millisecond
	// maxErrorText bounds the error kept of an attempt.
	maxErrorText = 512
)

// Dispatcher delivers the outbox. Run it on a goroutine its owner waits
// for (the runner's); it returns when its context ends, once the
// attempts under way have ended.
type Dispatcher struct {
	opts   Options
	client *http.Client
	log    *slog.Logger
	// wake is signalled when an attempt ends, freeing a slot.
	wake chan struct{}

	mu       sync.Mutex
	inFlight map[string]int // by webhook
	total    int
	wg       sync.WaitGroup
}

// NewDispatcher returns a dispatcher over opts.
func NewDispatcher(opts Options) *Dispatcher {
	opts = opts.withDefaults()
	d := &Dispatcher{opts: opts, log: opts.Log, wake: make(chan struct{}, 1), inFlight: map[string]int{}}
	d.client = &http.Client{
		Transport: opts.Policy.transport(opts.Timeout),
		Timeout:   opts.Timeout,
		// A redirect is an answer, not a success: following it would send
		// the event somewhere its owner did not register.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return d
}

func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.RetryFor <= 0 {
		o.RetryFor = DefaultRetryFor
	}
	if o.RetryBase <= 0 {
		o.RetryBase = DefaultRetryBase
	}
	if o.RetryMax <= 0 {
		o.RetryMax = DefaultRetryMax
	}
	o.RetryMax = max(o.RetryMax, o.RetryBase)
	if o.DisableAfter <= 0 {
		o.DisableAfter = DefaultDisableAfter
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Run fans events out and delivers them until ctx ends. It reads the
// store when the server's event position moves (an event to fan out),
// when an attempt ends (a slot is free), when the next delivery is due,
// and at least every Poll (another server's claim that ran out, a
// webhook enabled elsewhere); otherwise it only reads the position, so
// an idle server's database is left alone.
func (d *Dispatcher) Run(ctx context.Context) {
	defer d.client.CloseIdleConnections()
	defer d.wg.Wait()
	t := time.NewTicker(tick)
	defer t.Stop()
	var (
		seen            uint64
		pollAt, pruneAt time.Time
	)
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
			pollAt = time.Time{}
		case <-t.C:
		}
		now := d.opts.Now()
		seq := d.seq()
		if seq == seen && now.Before(pollAt) {
			continue
		}
		pollAt = now.Add(d.opts.Poll)
		if _, err := d.fanOut(ctx); err != nil {
			d.warn(ctx, "queue events for webhooks", err)
			continue
		}
		seen = seq
		if err := d.dispatch(ctx); err != nil {
			d.warn(ctx, "deliver webhooks", err)
			continue
		}
		if next, err := d.opts.Store.NextDelivery(ctx); err != nil {
			d.warn(ctx, "find the next webhook delivery", err)
		} else if !next.IsZero() && next.Before(pollAt) {
			pollAt = next
		}
		if !now.Before(pruneAt) {
			pruneAt = now.Add(pruneEvery)
			d.prune(ctx, now)
		}
	}
}

// prune fails the deliveries that wait for a disabled webhook past their
// retry window, which would otherwise wait for ever, and removes the
// deliveries that ended keepDeliveries ago.
func (d *Dispatcher) prune(ctx context.Context, now time.Time) {
	reason := fmt.Sprintf("abandoned: the webhook was disabled until its %s of retries ran out", d.opts.RetryFor)
	if n, err := d.opts.Store.AbandonDeliveries(ctx, now.Add(-d.opts.RetryFor), now, reason); err != nil {
		d.warn(ctx, "abandon the deliveries of disabled webhooks", err)
	} else if n > 0 {
		d.log.Info("abandoned the deliveries of disabled webhooks", "deliveries", n)
	}
	if _, err := d.opts.Store.PruneDeliveries(ctx, now.Add(-keepDeliveries)); err != nil {
		d.warn(ctx, "prune webhook deliveries", err)
	}
}

func (d *Dispatcher) warn(ctx context.Context, what string, err error) {
	if ctx.Err() == nil {
		d.log.Warn(what, "err", err)
	}
}

func (d *Dispatcher) seq() uint64 {
	if d.opts.Seq == nil {
		return 0
	}
	return d.opts.Seq()
}

// fanOut queues the events logged since the cursor, a batch at a time,
// and returns how many it read.
func (d *Dispatcher) fanOut(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := d.opts.Store.FanOut(ctx, fanOutBatch, d.plan)
		total += n
		if err != nil || n < fanOutBatch {
			return total, err
		}
	}
}

// plan makes the deliveries of evs to hooks.
func (d *Dispatcher) plan(hooks []store.Webhook, evs []store.Event) []store.Delivery {
	if len(hooks) == 0 {
		return nil
	}
	now := d.opts.Now()
	var out []store.Delivery
	for _, ev := range evs {
		names, err := namesOf(ev)
		if err != nil {
			d.log.Error("read an event for webhooks", "seq", ev.Seq, "err", err)
			continue
		}
		if len(names) == 0 {
			continue
		}
		var body []byte
		for _, w := range hooks {
			if !wants(w, ev, names) {
				continue
			}
			if body == nil {
				if body, err = eventJSON(ev); err != nil {
					d.log.Error("encode an event for webhooks", "seq", ev.Seq, "err", err)
					break
				}
			}
			out = append(out, store.Delivery{
				ID: newMessageID(), WebhookID: w.ID, Seq: ev.Seq, Kind: ev.Kind, SessionID: ev.SessionID,
				Body: body, NextAttempt: now, Created: now,
			})
		}
	}
	return out
}

// eventJSON is an event of the log as the SSE stream's data writes it.
func eventJSON(ev store.Event) ([]byte, error) {
	var e agentsv1.Event
	if err := proto.Unmarshal(ev.Body, &e); err != nil {
		return nil, err
	}
	e.Seq = ev.Seq
	return apijson.Marshal(&e)
}

// newMessageID is a delivery's webhook-id.
func newMessageID() string { return "msg_" + randomHex(16) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// dispatch claims the deliveries due, as many per endpoint as it has
// free slots, and starts their attempts.
func (d *Dispatcher) dispatch(ctx context.Context) error {
	now := d.opts.Now()
	ids, err := d.opts.Store.DueWebhooks(ctx, now)
	if err != nil {
		return err
	}
	for _, id := range ids {
		d.mu.Lock()
		free := min(d.opts.Concurrency-d.inFlight[id], maxInFlight-d.total)
		d.mu.Unlock()
		if free <= 0 {
			continue
		}
		w, err := d.opts.Store.GetWebhook(ctx, id)
		if errs.KindOf(err) == errs.KindNotFound {
			continue // deleted meanwhile, with its deliveries
		}
		if err != nil {
			return err
		}
		claim := randomHex(12)
		ds, err := d.opts.Store.ClaimDeliveries(ctx, id, claim, now, now.Add(2*d.opts.Timeout+claimMargin), free)
		if err != nil {
			return err
		}
		for _, del := range ds {
			d.mu.Lock()
			d.inFlight[id]++
			d.total++
			d.mu.Unlock()
			d.wg.Go(func() {
				defer d.done(id)
				d.attempt(ctx, w, del)
			})
		}
	}
	return nil
}

func (d *Dispatcher) done(id string) {
	d.mu.Lock()
	if d.inFlight[id]--; d.inFlight[id] <= 0 {
		delete(d.inFlight, id)
	}
	d.total--
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// attempt sends one delivery and records its outcome.
func (d *Dispatcher) attempt(ctx context.Context, w store.Webhook, del store.Delivery) {
	start := d.opts.Now()
	code, err := d.send(ctx, w, del, start)
	if ctx.Err() != nil {
		// The server stops: the claim expires and the delivery is
		// attempted again, here at the next start or by another server.
		return
	}
	a := store.Attempt{DeliveryID: del.ID, WebhookID: w.ID, Claim: del.Claim, At: d.opts.Now(), StatusCode: code}
	if err == nil {
		a.Delivered = true
	} else {
		a.Error = errorText(err)
		a.Next = d.next(del, a.At)
		a.DisableIfFailingSince = a.At.Add(-d.opts.DisableAfter)
		a.DisableReason = fmt.Sprintf("every attempt to deliver failed for %s (the last: %s); enable it again once it answers", d.opts.DisableAfter, a.Error)
	}
	held, rerr := d.opts.Store.RecordAttempt(context.WithoutCancel(ctx), a)
	switch {
	case rerr != nil:
		d.log.Warn("record a webhook delivery attempt", "webhook", w.ID, "delivery", del.ID, "err", rerr)
	case !held:
		d.log.Info("a webhook delivery's claim ran out before its attempt ended", "webhook", w.ID, "delivery", del.ID)
	case err != nil:
		d.log.Info("webhook delivery failed", "webhook", w.ID, "delivery", del.ID, "attempt", del.Attempts+1, "status", code, "err", a.Error, "retry", !a.Next.IsZero())
	}
}

// next is when a delivery that failed its attempt at now is tried
// again; zero gives up.
func (d *Dispatcher) next(del store.Delivery, now time.Time) time.Time {
	at := now.Add(Backoff(del.Attempts+1, d.opts.RetryBase, d.opts.RetryMax, mrand.Float64()))
	if at.After(del.Created.Add(d.opts.RetryFor)) {
		return time.Time{}
	}
	return at
}

// Backoff is the wait after the attempts-th failed attempt: base
// doubled for each attempt after the first, at most most, less up to
// half of it by jitter (a number in [0, 1)).
func Backoff(attempts int, base, most time.Duration, jitter float64) time.Duration {
	wait := base
	for i := 1; i < attempts && wait < most; i++ {
		wait *= 2
	}
	wait = min(wait, most)
	return wait - time.Duration(float64(wait/2)*jitter)
}

// send makes one attempt: 2xx is a success; any other status, or no
// answer, an error. It returns the status (0 for none).
func (d *Dispatcher) send(ctx context.Context, w store.Webhook, del store.Delivery, at time.Time) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(del.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agents-webhooks/1")
	if err := Sign(req.Header, w.Secret, del.ID, at, del.Body); err != nil {
		return 0, fmt.Errorf("sign: %w", err)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	// A little of the answer says what went wrong; the rest is dropped
	// unread past a bound, so an endpoint cannot make the server read
	// megabytes.
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return resp.StatusCode, nil
	}
	msg := strings.TrimSpace(string(head))
	if msg != "" {
		return resp.StatusCode, fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
	}
	return resp.StatusCode, fmt.Errorf("HTTP %d", resp.StatusCode)
}

// errorText is what the delivery log keeps of an attempt's error: the
// request's URL is the webhook's own and is left out.
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
		if ue.Timeout() {
			err = fmt.Errorf("no answer within the timeout: %w", err)
		}
	}
	s := err.Error()
	if len(s) > maxErrorText {
		s = s[:maxErrorText] + "…"
	}
	return s
}

package webhooks

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
)

// The specification's test vector (its libraries' tests sign it).
func TestSignGivesTheSpecificationsSignature(t *testing.T) {
	h := http.Header{}
	body := []byte(`{"test": 2432232314}`)
	if err := Sign(h, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), body); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"webhook-id":        "msg_p5jXN8AQM9LWM0D4loKWxJek",
		"webhook-timestamp": "1614265330",
		"webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
	}
	for name, v := range want {
		if got := h.Get(name); got != v {
			t.Errorf("%s = %q, want %q", name, got, v)
		}
	}
}

func TestNewSecretsAreStandardAndDiffer(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b || !strings.HasPrefix(a, "whsec_") {
		t.Fatalf("secrets %q and %q", a, b)
	}
	if got, err := checkSecret(a); err != nil || got != a {
		t.Errorf("checkSecret(new secret) = %q, %v", got, err)
	}
	for _, bad := range []string{"whsec_short", "whsec_!!!!", "whsec_" + strings.Repeat("A", 120)} {
		_, err := checkSecret(bad)
		if errs.KindOf(err) != errs.KindInvalid || strings.Contains(err.Error(), bad) {
			t.Errorf("checkSecret(%q) = %v, want invalid without the secret", bad, err)
		}
	}
}

func TestBackoffDoublesUpToItsMostLessJitter(t *testing.T) {
	base, most := time.Second, time.Minute
	for _, tc := range []struct {
		attempts int
		jitter   float64
		want     time.Duration
	}{
		{1, 0, time.Second},
		{2, 0, 2 * time.Second},
		{4, 0, 8 * time.Second},
		{7, 0, time.Minute},
		{100, 0, time.Minute},
		{1, 0.5, 750 * time.Millisecond},
		{7, 0.999999, 30*time.Second + 30*time.Microsecond},
	} {
		if got := Backoff(tc.attempts, base, most, tc.jitter); got.Round(time.Millisecond) != tc.want.Round(time.Millisecond) {
			t.Errorf("Backoff(%d, jitter %v) = %v, want %v", tc.attempts, tc.jitter, got, tc.want)
		}
	}
}

func TestCheckURLRefusesWhatWebhooksMayNotReach(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		url    string
		policy Policy
		wantIn string // "" accepts
	}{
		{"https://93.184.215.14/hook", Policy{}, ""},
		{"http://127.0.0.1:8080/hook", Policy{}, "loopback"},
		{"http://localhost/hook", Policy{}, "loopback"},
		{"http://[::1]/hook", Policy{}, "loopback"},
		{"http://10.1.2.3/hook", Policy{}, "private"},
		{"http://192.168.1.1/hook", Policy{}, "private"},
		{"http://169.254.169.254/latest", Policy{}, "link-local"},
		{"http://[::ffff:127.0.0.1]/hook", Policy{}, "loopback"},
		{"http://0.0.0.0/hook", Policy{}, "an unspecified address"},
		{"http://100.64.0.1/hook", Policy{}, "reserved"},
		{"ftp://example.com/hook", Policy{}, "http or https"},
		{"file:///etc/passwd", Policy{}, "http or https"},
		{"http:///nohost", Policy{}, "no host"},
		{"https://user:pw@93.184.215.14/", Policy{}, "credentials"},
		{"", Policy{}, "required"},
		{"http://127.0.0.1:8080/hook", Policy{AllowPrivate: true}, ""},
		{"http://127.0.0.1:8080/hook", Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, ""},
		{"http://10.1.2.3/hook", Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, "private"},
	} {
		_, err := tc.policy.CheckURL(ctx, tc.url)
		switch {
		case tc.wantIn == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", tc.url, err)
		case tc.wantIn != "" && (errs.KindOf(err) != errs.KindInvalid || !strings.Contains(err.Error(), tc.wantIn)):
			t.Errorf("%s: %v, want invalid saying %q", tc.url, err, tc.wantIn)
		}
	}
}

// fixture is a store with a session of alice's, a service that allows
// loopback endpoints, and a way to log events.
type fixture struct {
	t   *testing.T
	st  store.Store
	svc *Service
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now()
	if err := st.CreateSession(context.Background(), session.Meta{ID: "s1", Agent: "a", Owner: "alice", Status: session.StatusReady, Created: now, Updated: now}, nil); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, st: st, svc: NewService(st, Policy{AllowPrivate: true})}
}

// runStopped logs a run.stopped of alice's session and returns its seq.
func (f *fixture) runStopped(text string) uint64 {
	f.t.Helper()
	ev := events.WithKind(&agentsv1.Event{SessionId: "s1", Owner: "alice", Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{
		Status: agentsv1.SessionStatus_SESSION_STATUS_READY, Reason: "done", Text: text,
	}}})
	body, err := proto.Marshal(ev)
	if err != nil {
		f.t.Fatal(err)
	}
	c := &store.Change{Events: []store.Event{{SessionID: "s1", Owner: "alice", Kind: ev.Kind, Time: time.Now(), Body: body}}}
	if err := f.st.Commit(context.Background(), c); err != nil {
		f.t.Fatal(err)
	}
	return c.Events[0].Seq
}

func (f *fixture) register(url string, names ...string) (store.Webhook, string) {
	f.t.Helper()
	w, secret, err := f.svc.Create(context.Background(), Caller{Owner: "alice"}, Create{URL: url, Events: names})
	if err != nil {
		f.t.Fatal(err)
	}
	return w, secret
}

// start runs a dispatcher until the test ends.
func (f *fixture) start(opts Options) {
	f.t.Helper()
	opts.Store, opts.Policy = f.st, Policy{AllowPrivate: true}
	if opts.Poll == 0 {
		opts.Poll = 20 * time.Millisecond
	}
	if opts.RetryBase == 0 {
		opts.RetryBase = 10 * time.Millisecond
	}
	d := NewDispatcher(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	f.t.Cleanup(func() {
		cancel()
		<-done
	})
}

// receiver is an endpoint that verifies each request's signature and
// answers with the statuses given in turn (200 once they run out).
type receiver struct {
	t        *testing.T
	secret   string
	mu       sync.Mutex
	statuses []int
	// attempts and successes by webhook-id; bodies as received.
	attempts, successes map[string]int
	bodies              map[string]string
	srv                 *httptest.Server
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{t: t, statuses: statuses, attempts: map[string]int{}, successes: map[string]int{}, bodies: map[string]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(r.secret)
	if err != nil {
		r.t.Errorf("secret: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if err := wh.Verify(body, req.Header); err != nil {
		r.t.Errorf("a request that does not verify: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	id := req.Header.Get(HeaderID)
	r.attempts[id]++
	r.bodies[id] = string(body)
	status := http.StatusOK
	if len(r.statuses) > 0 {
		status, r.statuses = r.statuses[0], r.statuses[1:]
	}
	if status/100 == 2 {
		r.successes[id]++
	}
	w.WriteHeader(status)
}

func (r *receiver) successCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.successes)
}

// waitFor polls until cond holds, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (f *fixture) deliveries(id string) []store.Delivery {
	f.t.Helper()
	ds, err := f.svc.Deliveries(context.Background(), Caller{Owner: "alice"}, id, "", 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return ds
}

// A delivery the endpoint answers 500 is retried with the same
// webhook-id and body until it is taken; the log says how it went.
func TestA500IsRetriedUntilTheEndpointTakesIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := newReceiver(t, 500, 500, 200)
	w, secret := f.register(r.srv.URL, NameRunStopped)
	r.secret = secret
	f.start(Options{})
	seq := f.runStopped("the answer")

	waitFor(t, "a success", func() bool { return r.successCount() == 1 })
	waitFor(t, "the delivery recorded", func() bool {
		ds := f.deliveries(w.ID)
		return len(ds) == 1 && ds[0].Status == store.DeliveryDelivered
	})
	d := f.deliveries(w.ID)[0]
	if d.Attempts != 3 || d.LastStatusCode != 200 || d.LastError != "" || d.Seq != seq || d.Kind != events.KindRunStopped ||
		d.Delivered.IsZero() || !d.LastAttempt.Equal(d.Delivered) {
		t.Errorf("delivery = %+v, want run.stopped #%d delivered at the third attempt, its last", d, seq)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if got := r.attempts[d.ID]; got != 3 {
		t.Errorf("the receiver saw %d attempts of %s, want 3 (one id for every attempt)", got, d.ID)
	}
	body := r.bodies[d.ID]
	for _, want := range []string{`"kind":"run.stopped"`, `"text":"the answer"`, `"session_id":"s1"`, `"seq":`} {
		if !strings.Contains(body, want) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}
}

// Several dispatchers on one store deliver every event, and each
// webhook-id is taken once.
func TestEveryEventIsDeliveredAndNoneSucceedsTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := newReceiver(t, 503, 200, 500)
	w, secret := f.register(r.srv.URL, NameRunStopped, NameSessionIdle)
	r.secret = secret
	for range 3 {
		f.start(Options{})
	}
	const n = 30
	for i := range n {
		f.runStopped("answer " + string(rune('a'+i%26)))
	}
	waitFor(t, "every event delivered", func() bool { return r.successCount() == n })
	waitFor(t, "every delivery recorded", func() bool {
		for _, d := range f.deliveries(w.ID) {
			if d.Status != store.DeliveryDelivered {
				return false
			}
		}
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, c := range r.successes {
		if c != 1 {
			t.Errorf("%s taken %d times", id, c)
		}
	}
	if ds := f.deliveries(w.ID); len(ds) != n {
		t.Errorf("%d deliveries logged, want %d (one per event, though it matches two names)", len(ds), n)
	}
}

// An endpoint that fails for longer than DisableAfter is disabled, and
// says why.
func TestAnEndpointFailingTooLongIsDisabled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	fail := make([]int, 1000)
	for i := range fail {
		fail[i] = http.StatusBadGateway
	}
	r := newReceiver(t, fail...)
	w, secret := f.register(r.srv.URL, NameRunStopped)
	r.secret = secret
	f.start(Options{DisableAfter: 200 * time.Millisecond, RetryMax: 20 * time.Millisecond})
	f.runStopped("x")
	waitFor(t, "the webhook disabled", func() bool {
		got, err := f.svc.Get(context.Background(), Caller{Owner: "alice"}, w.ID)
		return err == nil && !got.Enabled
	})
	got, _ := f.svc.Get(context.Background(), Caller{Owner: "alice"}, w.ID)
	if !strings.Contains(got.DisabledReason, "HTTP 502") || got.FailingSince.IsZero() {
		t.Errorf("disabled webhook = reason %q, failing since %v; want the last error and when it began", got.DisabledReason, got.FailingSince)
	}
	// Enabled again, it starts afresh.
	on := true
	again, err := f.svc.Update(context.Background(), Caller{Owner: "alice"}, w.ID, Update{Enabled: &on})
	if err != nil || !again.Enabled || again.DisabledReason != "" || !again.FailingSince.IsZero() {
		t.Errorf("enabled again = %+v, %v", again, err)
	}
}

// A delivery retried past RetryFor fails, and is not retried again.
func TestADeliveryIsGivenUpAfterItsRetryWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	fail := make([]int, 1000)
	for i := range fail {
		fail[i] = http.StatusInternalServerError
	}
	r := newReceiver(t, fail...)
	w, secret := f.register(r.srv.URL, NameRunStopped)
	r.secret = secret
	f.start(Options{RetryFor: time.Second, RetryMax: 20 * time.Millisecond})
	f.runStopped("x")
	waitFor(t, "the delivery failed", func() bool {
		ds := f.deliveries(w.ID)
		return len(ds) == 1 && ds[0].Status == store.DeliveryFailed
	})
	d := f.deliveries(w.ID)[0]
	if d.Attempts < 2 || d.LastStatusCode != 500 || !d.NextAttempt.IsZero() || d.LastAttempt.Before(d.Created) {
		t.Errorf("failed delivery = %+v, want several attempts that got 500, the last timed", d)
	}
}

// Without the operator's consent the dispatcher does not connect to a
// loopback address, whatever the stored URL says: the check is made as
// it dials.
func TestTheDialerRefusesLoopbackWithoutConsent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := newReceiver(t)
	w, _ := f.register(r.srv.URL, NameRunStopped)
	d := NewDispatcher(Options{Store: f.st})
	code, err := d.send(context.Background(), w, store.Delivery{ID: "msg_x", Body: []byte(`{}`)}, time.Now())
	if err == nil || code != 0 || !strings.Contains(errorText(err), "loopback") {
		t.Fatalf("send to %s without consent = %d, %v; want refused as loopback", r.srv.URL, code, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.attempts) != 0 {
		t.Errorf("the receiver was reached: %v", r.attempts)
	}
}

// Another owner neither sees nor changes a webhook; a server-wide one
// needs an admin.
func TestAnotherOwnersWebhookIsUnknown(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w, _ := f.register("http://127.0.0.1:9/hook", NameRunStopped)
	ctx := context.Background()
	bob := Caller{Owner: "bob"}
	if _, err := f.svc.Get(ctx, bob, w.ID); errs.CodeOf(err) != errs.CodeUnknownWebhook {
		t.Errorf("bob gets alice's webhook: %v", err)
	}
	if _, err := f.svc.Deliveries(ctx, bob, w.ID, "", 0); errs.CodeOf(err) != errs.CodeUnknownWebhook {
		t.Errorf("bob reads alice's deliveries: %v", err)
	}
	if err := f.svc.Delete(ctx, bob, w.ID); errs.CodeOf(err) != errs.CodeUnknownWebhook {
		t.Errorf("bob deletes alice's webhook: %v", err)
	}
	if ws, err := f.svc.List(ctx, bob, false); err != nil || len(ws) != 0 {
		t.Errorf("bob lists %v, %v", ws, err)
	}
	if _, err := f.svc.List(ctx, bob, true); errs.KindOf(err) != errs.KindPermissionDenied {
		t.Errorf("bob lists every owner's: %v", err)
	}
	if _, _, err := f.svc.Create(ctx, bob, Create{URL: "http://127.0.0.1:9/", Events: []string{NameRunStopped}, ServerWide: true}); errs.KindOf(err) != errs.KindPermissionDenied {
		t.Errorf("bob registers a server-wide webhook: %v", err)
	}
	if _, err := f.svc.Get(ctx, Caller{Owner: "root", Admin: true}, w.ID); err != nil {
		t.Errorf("an admin reads alice's webhook: %v", err)
	}
	if _, _, err := f.svc.Create(ctx, bob, Create{URL: "http://127.0.0.1:9/", Events: []string{"run.exploded"}}); errs.KindOf(err) != errs.KindInvalid {
		t.Errorf("an unknown event: %v", err)
	}
}

// A create retried with its idempotency key answers with the webhook
// the first made, and its secret; the key with another body, or one
// used for another operation, is refused; the key is its owner's.
func TestACreateRetriedWithItsKeyMakesOneWebhook(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	alice := Caller{Owner: "alice"}
	req := Create{URL: "http://127.0.0.1:9/hook", Events: []string{NameRunStopped}, Key: "hook-1"}
	first, secret, err := f.svc.Create(ctx, alice, req)
	if err != nil {
		t.Fatal(err)
	}
	again, secretAgain, err := f.svc.Create(ctx, alice, req)
	if err != nil || again.ID != first.ID || secretAgain != secret {
		t.Fatalf("the retry made %s (%v), want %s with its secret", again.ID, err, first.ID)
	}
	other := req
	other.Description = "another"
	if _, _, err := f.svc.Create(ctx, alice, other); errs.CodeOf(err) != errs.CodeIdempotencyKeyReused {
		t.Errorf("the key with another body: %v", err)
	}
	key := &store.IdempotencyRecord{Owner: "alice", Key: "schedule-1", Op: "create_schedule", Result: `{"schedule_id":"x"}`, Created: time.Now()}
	if err := f.st.Commit(ctx, &store.Change{Idempotency: key}); err != nil {
		t.Fatal(err)
	}
	other = req
	other.Key = "schedule-1"
	if _, _, err := f.svc.Create(ctx, alice, other); errs.CodeOf(err) != errs.CodeIdempotencyKeyReused {
		t.Errorf("a schedule's key: %v", err)
	}
	other.Key = strings.Repeat("k", MaxKey+1)
	if _, _, err := f.svc.Create(ctx, alice, other); errs.KindOf(err) != errs.KindInvalid {
		t.Errorf("a key too long: %v", err)
	}
	if bobs, _, err := f.svc.Create(ctx, Caller{Owner: "bob"}, req); err != nil || bobs.ID == first.ID {
		t.Errorf("bob's create with alice's key: %s, %v; want a webhook of his own", bobs.ID, err)
	}
	if ws, err := f.svc.List(ctx, alice, false); err != nil || len(ws) != 1 {
		t.Errorf("alice has %d webhooks (%v), want 1", len(ws), err)
	}
}

// The deliveries waiting for a disabled webhook, which no attempt is
// made of, fail once their retry window is over, saying why; a deleted
// webhook's go with it.
func TestTheDeliveriesOfADisabledWebhookAreAbandoned(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	off, _ := f.register("http://127.0.0.1:9/off", NameRunStopped)
	gone, _ := f.register("http://127.0.0.1:9/gone", NameRunStopped)
	f.runStopped("x")
	if _, err := f.st.FanOut(ctx, 10, NewDispatcher(Options{}).plan); err != nil {
		t.Fatal(err)
	}
	if len(f.deliveries(off.ID)) != 1 || len(f.deliveries(gone.ID)) != 1 {
		t.Fatalf("deliveries queued: %d and %d, want one each", len(f.deliveries(off.ID)), len(f.deliveries(gone.ID)))
	}
	disabled := false
	if _, err := f.svc.Update(ctx, Caller{Owner: "alice"}, off.ID, Update{Enabled: &disabled}); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Delete(ctx, Caller{Owner: "alice"}, gone.ID); err != nil {
		t.Fatal(err)
	}
	f.start(Options{RetryFor: time.Millisecond})
	waitFor(t, "the delivery abandoned", func() bool {
		ds := f.deliveries(off.ID)
		return len(ds) == 1 && ds[0].Status == store.DeliveryFailed
	})
	if d := f.deliveries(off.ID)[0]; d.Attempts != 0 || !strings.Contains(d.LastError, "disabled") {
		t.Errorf("abandoned delivery = %+v, want no attempt and why", d)
	}
	if ds, err := f.st.ListDeliveries(ctx, gone.ID, "", 10); err != nil || len(ds) != 0 {
		t.Errorf("a deleted webhook's deliveries: %+v, %v", ds, err)
	}
}

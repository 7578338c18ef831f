//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// The tokens of the webhook tests' servers: alice and bob, no admin.
const (
	hookAliceToken = "hook-alice-token-0123456789"
	hookBobToken   = "hook-bob-token-0123456789"
)

// startWebhookServe runs agents serve with the small agent answering at
// once, alice's and bob's tokens, and the config file's webhooks
// settings (none when empty).
func startWebhookServe(t *testing.T, webhooks string) *serveProc {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(tokens, []byte(`{"tokens": [{"token": "`+hookAliceToken+`", "owner": "alice"}, {"token": "`+hookBobToken+`", "owner": "bob"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "agents.json")
	settings := "{}"
	if webhooks != "" {
		settings = `{"webhooks": ` + webhooks + `}`
	}
	if err := os.WriteFile(cfg, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	model := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "noted: {{last_user}}"}})
	return startServeAgents(t, buildAgents(t), dir, filepath.Join(dir, "agents.db"), model.URL(),
		[]string{"testdata/agents/small.json"}, "", "--auth-tokens", tokens, "--config", cfg)
}

// hookReceiver is an endpoint that verifies every request's signature
// with the secret it is given, answers 500 to the first attempt of each
// webhook-id and 2xx after, and counts what it took.
type hookReceiver struct {
	t        *testing.T
	mu       sync.Mutex
	secret   string
	attempts map[string]int
	// taken counts the 2xx answers by webhook-id; bodies keeps the
	// body taken.
	taken  map[string]int
	bodies map[string]string
	srv    *httptest.Server
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{t: t, attempts: map[string]int{}, taken: map[string]int{}, bodies: map[string]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(r.secret)
	if err == nil {
		err = wh.Verify(body, req.Header)
	}
	if err != nil {
		r.t.Errorf("a webhook request that does not verify: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	id := req.Header.Get("webhook-id")
	r.attempts[id]++
	if r.attempts[id] == 1 {
		http.Error(w, "try again", http.StatusInternalServerError)
		return
	}
	r.taken[id]++
	r.bodies[id] = string(body)
	w.WriteHeader(http.StatusNoContent)
}

// runStoppedSessions returns the sessions of the run.stopped events
// taken.
func (r *hookReceiver) runStoppedSessions() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, b := range r.bodies {
		var ev struct {
			Kind      string `json:"kind"`
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(b), &ev); err != nil {
			r.t.Errorf("a body that is not JSON: %s", b)
			continue
		}
		if ev.Kind == "run.stopped" {
			out[ev.SessionID]++
		}
	}
	return out
}

// runOnce creates a session of the small agent and waits for its run to
// stop; it returns the session and how long the run took.
func runOnce(t *testing.T, c *client.Client, text string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := c.Sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "small", Message: &agentsv1.Message{Text: text},
	}))
	if err != nil {
		t.Fatalf("create a session: %v", err)
	}
	id := res.Msg.GetSession().GetMeta().GetId()
	got, err := c.Sessions.GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{
		SessionId: id, Wait: true, Timeout: durationpb.New(20 * time.Second), MetaOnly: true,
	}))
	if err != nil {
		t.Fatalf("wait for %s: %v", id, err)
	}
	if s := got.Msg.GetSession().GetMeta().GetStatus(); s != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("session %s is %v after its run, want ready", id, s)
	}
	return id, time.Since(start)
}

func createHook(t *testing.T, c *client.Client, url string, events ...string) (*agentsv1.Webhook, string) {
	t.Helper()
	res, err := c.Webhooks.CreateWebhook(ctxFor(t), connect.NewRequest(&agentsv1.CreateWebhookRequest{Url: url, Events: events}))
	if err != nil {
		t.Fatalf("create a webhook to %s: %v", url, err)
	}
	return res.Msg.GetWebhook(), res.Msg.GetSecret()
}

// TestWebhooksDeliverASignedRunStoppedForEveryRun registers an endpoint
// for run.stopped and runs sessions: the endpoint gets one verified
// delivery per run, each first answered 500 and retried with the same
// webhook-id, none taken twice, and the delivery log says so. The
// secret shows in the create answer only, in no read and no log line.
func TestWebhooksDeliverASignedRunStoppedForEveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	srv := startWebhookServe(t, `{"allow_private": true, "retry_base": "200ms", "retry_max": "1s"}`)
	alice := client.New(http.DefaultClient, srv.url, hookAliceToken)
	r := newHookReceiver(t)
	hook, secret := createHook(t, alice, r.srv.URL+"/hooks", "run.stopped")
	if !strings.HasPrefix(secret, "whsec_") || hook.GetStatus() != agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED || hook.GetOwner() != "alice" {
		t.Fatalf("created %v with secret %q", hook, secret)
	}
	r.mu.Lock()
	r.secret = secret
	r.mu.Unlock()

	const runs = 5
	sessions := map[string]bool{}
	for i := range runs {
		id, _ := runOnce(t, alice, fmt.Sprintf("note %d", i))
		sessions[id] = true
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(r.runStoppedSessions()) < runs && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := r.runStoppedSessions()
	for id := range sessions {
		if got[id] != 1 {
			t.Errorf("session %s: %d run.stopped taken, want 1", id, got[id])
		}
	}
	r.mu.Lock()
	for id, n := range r.taken {
		if n != 1 || r.attempts[id] != 2 {
			t.Errorf("webhook-id %s: taken %d times after %d attempts, want once after 2 (a 500, then the retry)", id, n, r.attempts[id])
		}
	}
	r.mu.Unlock()

	var ds []*agentsv1.WebhookDelivery
	for time.Now().Before(deadline) {
		res, err := alice.Webhooks.ListWebhookDeliveries(ctxFor(t), connect.NewRequest(&agentsv1.ListWebhookDeliveriesRequest{WebhookId: hook.GetId()}))
		if err != nil {
			t.Fatalf("list deliveries: %v", err)
		}
		ds = res.Msg.GetDeliveries()
		done := len(ds) == runs
		for _, d := range ds {
			done = done && d.GetStatus() == agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED
		}
		if done {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(ds) != runs {
		t.Fatalf("%d deliveries logged, want %d", len(ds), runs)
	}
	for _, d := range ds {
		if d.GetStatus() != agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED || d.GetAttempts() != 2 || d.GetLastStatusCode() != http.StatusNoContent || !sessions[d.GetSessionId()] {
			t.Errorf("delivery %v, want delivered at the second attempt for one of the runs", d)
		}
	}

	// The secret is in no later answer and in no log line.
	req, _ := http.NewRequest(http.MethodGet, srv.url+"/v1/webhooks", nil)
	req.Header.Set("Authorization", "Bearer "+hookAliceToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(listed), hook.GetId()) || strings.Contains(string(listed), secret) {
		t.Errorf("GET /v1/webhooks = %d %s; want the webhook without its secret", res.StatusCode, listed)
	}
	if strings.Contains(srv.logs.String(), strings.TrimPrefix(secret, "whsec_")) {
		t.Error("the server logged the webhook's secret")
	}
}

// TestASlowWebhookEndpointDoesNotSlowRuns times runs with no webhook,
// then with one whose endpoint holds every request unanswered: every run
// still ends while its deliveries hang, in about the time it took
// without.
func TestASlowWebhookEndpointDoesNotSlowRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	srv := startWebhookServe(t, `{"allow_private": true, "timeout": "60s"}`)
	alice := client.New(http.DefaultClient, srv.url, hookAliceToken)

	const runs = 6
	var without time.Duration
	for i := range runs {
		_, d := runOnce(t, alice, fmt.Sprintf("before %d", i))
		without += d
	}

	release := make(chan struct{})
	var held sync.WaitGroup
	var mu sync.Mutex
	arrived := 0
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived++
		mu.Unlock()
		held.Add(1)
		defer held.Done()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		close(release)
		slow.Close()
	})
	createHook(t, alice, slow.URL, "run.stopped", "session.idle")
	// A first run's deliveries reach the endpoint, which holds them.
	runOnce(t, alice, "first")
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := arrived
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow endpoint was sent nothing")
		}
		time.Sleep(20 * time.Millisecond)
	}

	var with time.Duration
	for i := range runs {
		_, d := runOnce(t, alice, fmt.Sprintf("after %d", i))
		with += d
	}
	mu.Lock()
	n := arrived
	mu.Unlock()
	t.Logf("%d runs took %v without a webhook, %v with a slow one (%d requests held meanwhile)", runs, without, with, n)
	// The runs ended while the endpoint still held its requests: no run
	// waited for a delivery. Their time is only reported, not judged
	// (the machine's load decides it), beyond a bound no run that waited
	// for a 60 s answer could meet.
	if with > without+30*time.Second {
		t.Errorf("runs took %v with the slow endpoint, %v without", with, without)
	}
}

// TestAWebhookToLoopbackIsRefusedUnlessTheConfigAllowsIt registers an
// endpoint on 127.0.0.1 with a server whose config says nothing of
// webhooks (refused, saying why), one that allows 127.0.0.1/32 only, and
// refuses a URL that is not http(s).
func TestAWebhookToLoopbackIsRefusedUnlessTheConfigAllowsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	for _, tc := range []struct {
		name, config string
		allowed      bool
	}{
		{"no consent", "", false},
		{"127.0.0.1/32 allowed", `{"allow_cidrs": ["127.0.0.1/32"]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startWebhookServe(t, tc.config)
			urls := []string{"http://127.0.0.1:9/hook", "http://127.0.0.2:9/hook"}
			if !tc.allowed {
				urls = append(urls, "http://localhost:9/hook")
			}
			for _, url := range urls {
				status, body := postWebhook(t, srv.url, hookAliceToken, `{"url": "`+url+`", "events": ["run.stopped"]}`)
				switch {
				case tc.allowed && url == "http://127.0.0.1:9/hook":
					if status != http.StatusCreated || !strings.Contains(body, `"secret":"whsec_`) {
						t.Errorf("POST /v1/webhooks %s = %d %s, want 201 with the secret", url, status, body)
					}
				case status != http.StatusBadRequest || !strings.Contains(body, "loopback") || !strings.Contains(body, "webhooks.allow_private"):
					t.Errorf("POST /v1/webhooks %s = %d %s, want 400 saying it is loopback and how to allow it", url, status, body)
				}
			}
			status, body := postWebhook(t, srv.url, hookAliceToken, `{"url": "ftp://example.com/hook", "events": ["run.stopped"]}`)
			if status != http.StatusBadRequest || !strings.Contains(body, "http or https") {
				t.Errorf("POST /v1/webhooks ftp:// = %d %s, want 400", status, body)
			}
		})
	}
}

func postWebhook(t *testing.T, base, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/webhooks", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestAnotherOwnerCannotListOrReadAWebhook: bob lists none of alice's
// webhooks, and reading, changing, deleting one or its deliveries is
// not found, as for a webhook that does not exist.
func TestAnotherOwnerCannotListOrReadAWebhook(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	srv := startWebhookServe(t, `{"allow_private": true}`)
	alice := client.New(http.DefaultClient, srv.url, hookAliceToken)
	bob := client.New(http.DefaultClient, srv.url, hookBobToken)
	hook, _ := createHook(t, alice, "http://127.0.0.1:9/hook", "run.failed")
	id := hook.GetId()

	list, err := bob.Webhooks.ListWebhooks(ctxFor(t), connect.NewRequest(&agentsv1.ListWebhooksRequest{}))
	if err != nil || len(list.Msg.GetWebhooks()) != 0 {
		t.Errorf("bob lists %v, %v; want none", list.Msg.GetWebhooks(), err)
	}
	if _, err := bob.Webhooks.ListWebhooks(ctxFor(t), connect.NewRequest(&agentsv1.ListWebhooksRequest{AllOwners: true})); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("bob lists every owner's: %v, want permission denied", err)
	}
	off := false
	for name, call := range map[string]func() error{
		"get": func() error {
			_, err := bob.Webhooks.GetWebhook(ctxFor(t), connect.NewRequest(&agentsv1.GetWebhookRequest{WebhookId: id}))
			return err
		},
		"deliveries": func() error {
			_, err := bob.Webhooks.ListWebhookDeliveries(ctxFor(t), connect.NewRequest(&agentsv1.ListWebhookDeliveriesRequest{WebhookId: id}))
			return err
		},
		"disable": func() error {
			_, err := bob.Webhooks.UpdateWebhook(ctxFor(t), connect.NewRequest(&agentsv1.UpdateWebhookRequest{WebhookId: id, Enabled: &off}))
			return err
		},
		"delete": func() error {
			_, err := bob.Webhooks.DeleteWebhook(ctxFor(t), connect.NewRequest(&agentsv1.DeleteWebhookRequest{WebhookId: id}))
			return err
		},
	} {
		if err := call(); connect.CodeOf(err) != connect.CodeNotFound || !strings.Contains(err.Error(), "unknown webhook") {
			t.Errorf("bob's %s of alice's webhook: %v, want not found", name, err)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.url+"/v1/webhooks/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+hookBobToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("bob's GET /v1/webhooks/%s = %d, want 404", id, res.StatusCode)
	}
	got, err := alice.Webhooks.GetWebhook(ctxFor(t), connect.NewRequest(&agentsv1.GetWebhookRequest{WebhookId: id}))
	if err != nil || got.Msg.GetWebhook().GetStatus() != agentsv1.WebhookStatus_WEBHOOK_STATUS_ENABLED {
		t.Errorf("alice's webhook after bob's tries: %v, %v", got.Msg.GetWebhook(), err)
	}
}

// TestClusterWebhooksDeliverEachRunOnceFromTheServersSharedOutbox runs
// sessions on two servers sharing a database, with one webhook: both
// dispatchers deliver, from one outbox, a run.stopped for every run of
// either server, each first answered 500 and retried, none taken twice.
func TestClusterWebhooksDeliverEachRunOnceFromTheServersSharedOutbox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	dsn := pgtest.DSN(t)
	model := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "noted: {{last_user}}"}})
	var servers []*client.Client
	for i := range 2 {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "agents.json")
		if err := os.WriteFile(cfg, []byte(`{"webhooks": {"allow_private": true, "retry_base": "200ms", "retry_max": "1s"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		p := startServeAgents(t, buildAgents(t), dir, dsn, model.URL(), []string{"testdata/agents/small.json"}, "",
			"--server-id", fmt.Sprintf("hooks%d", i+1), "--config", cfg)
		servers = append(servers, client.New(http.DefaultClient, p.url, ""))
	}
	r := newHookReceiver(t)
	_, secret := createHook(t, servers[0], r.srv.URL, "run.stopped")
	r.mu.Lock()
	r.secret = secret
	r.mu.Unlock()

	sessions := map[string]bool{}
	for i := range 8 {
		id, _ := runOnce(t, servers[i%2], fmt.Sprintf("note %d", i))
		sessions[id] = true
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(r.runStoppedSessions()) < len(sessions) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	// Give a second delivery of any of them time to arrive.
	time.Sleep(time.Second)
	got := r.runStoppedSessions()
	for id := range sessions {
		if got[id] != 1 {
			t.Errorf("session %s: %d run.stopped taken, want 1", id, got[id])
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.taken) != len(sessions) {
		t.Errorf("%d webhook-ids taken, want %d", len(r.taken), len(sessions))
	}
	for id, n := range r.taken {
		if n != 1 {
			t.Errorf("webhook-id %s taken %d times", id, n)
		}
	}
}

// TestAWebhookDeliveryCutByASIGKILLIsDeliveredAfterTheRestart kills the
// server while its endpoint holds a delivery's first attempt: the
// restarted server attempts it again, with the same webhook-id, once the
// dead one's claim ran out, and it is delivered once.
func TestAWebhookDeliveryCutByASIGKILLIsDeliveredAfterTheRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	eachStore(t, func(t *testing.T, dir, db string) {
		cfg := filepath.Join(dir, "agents.json")
		if err := os.WriteFile(cfg, []byte(`{"webhooks": {"allow_private": true, "timeout": "1s"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		model := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "noted"}})
		start := func() *serveProc {
			return startServeAgents(t, buildAgents(t), dir, db, model.URL(), []string{"testdata/agents/small.json"}, "",
				"--config", cfg, "--server-id", "hooks")
		}
		first := start()
		c := client.New(http.DefaultClient, first.url, "")

		var mu sync.Mutex
		var ids []string
		held := make(chan struct{})
		release := make(chan struct{})
		var once sync.Once
		endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			ids = append(ids, r.Header.Get("webhook-id"))
			n := len(ids)
			mu.Unlock()
			if n == 1 {
				// The first attempt is held until the server that made
				// it is dead.
				once.Do(func() { close(held) })
				<-release
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(endpoint.Close)
		t.Cleanup(func() {
			select {
			case <-release:
			default:
				close(release)
			}
		})
		hook, _ := createHook(t, c, endpoint.URL, "run.stopped")
		runOnce(t, c, "hold this one")
		select {
		case <-held:
		case <-time.After(20 * time.Second):
			t.Fatal("the endpoint got no attempt")
		}
		first.kill(t)
		close(release)

		second := start()
		c = client.New(http.DefaultClient, second.url, "")
		var d *agentsv1.WebhookDelivery
		deadline := time.Now().Add(40 * time.Second)
		for time.Now().Before(deadline) {
			res, err := c.Webhooks.ListWebhookDeliveries(ctxFor(t), connect.NewRequest(&agentsv1.ListWebhookDeliveriesRequest{WebhookId: hook.GetId()}))
			if err != nil {
				t.Fatalf("list deliveries: %v", err)
			}
			if ds := res.Msg.GetDeliveries(); len(ds) == 1 && ds[0].GetStatus() == agentsv1.DeliveryStatus_DELIVERY_STATUS_DELIVERED {
				d = ds[0]
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if d == nil {
			t.Fatal("the delivery was not delivered after the restart")
		}
		mu.Lock()
		defer mu.Unlock()
		if len(ids) != 2 || ids[0] != d.GetId() || ids[1] != d.GetId() {
			t.Errorf("attempts carried webhook-ids %q, want %s twice (the cut attempt and the retry)", ids, d.GetId())
		}
		if d.GetAttempts() != 1 {
			t.Errorf("delivery recorded %d attempts, want 1 (the cut one was never recorded)", d.GetAttempts())
		}
	})
}

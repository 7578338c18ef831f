package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// The webhooks commands against an in-process server: a webhook is
// registered (its secret printed once), listed, read, disabled, its
// log read, and removed; a loopback endpoint is refused, saying why.
func TestWebhooksCommands(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	db := filepath.Join(dir, "hooks.db")
	cmd := func(args ...string) (int, string, string) {
		t.Helper()
		return run(t, env, append(append([]string{"webhooks"}, args...), "--db", db)...)
	}
	code, out, errOut := cmd("create", "https://93.184.215.14/hook", "--event", "run.stopped,call.waiting", "--description", "ops")
	if code != 0 {
		t.Fatalf("create = %d: %s%s", code, out, errOut)
	}
	id := regexp.MustCompile(`created webhook (wh_\w+)`).FindStringSubmatch(out)
	secret := regexp.MustCompile(`secret (whsec_\S+)`).FindStringSubmatch(out)
	if id == nil || secret == nil {
		t.Fatalf("create printed %q, want the id and the secret", out)
	}
	code, out, errOut = cmd("ls")
	checkRun(t, "ls", code, out, errOut, 0, []string{id[1], "enabled", "LAST", "run.stopped,call.waiting", "https://93.184.215.14/hook"}, []string{secret[1]})
	code, out, errOut = cmd("disable", id[1])
	checkRun(t, "disable", code, out, errOut, 0, []string{"disabled webhook " + id[1]}, nil)
	code, out, errOut = cmd("get", id[1])
	checkRun(t, "get", code, out, errOut, 0, []string{"status       disabled", "description  ops", "events       run.stopped, call.waiting", "last         none yet"}, []string{secret[1]})
	code, out, errOut = cmd("get", id[1], "--json")
	checkRun(t, "get --json", code, out, errOut, 0, []string{`"status": "WEBHOOK_STATUS_DISABLED"`}, []string{secret[1], "whsec_"})
	code, out, errOut = cmd("deliveries", id[1], "--status", "failed")
	checkRun(t, "deliveries", code, out, errOut, 0, []string{"ID", "ATTEMPTS"}, nil)
	code, out, errOut = cmd("enable", id[1])
	checkRun(t, "enable", code, out, errOut, 0, []string{"enabled webhook " + id[1]}, nil)

	code, _, errOut = cmd("create", "http://127.0.0.1:8000/hook", "--event", "run.stopped")
	if code == 0 || !strings.Contains(errOut, "loopback") || !strings.Contains(errOut, "webhooks.allow_private") {
		t.Errorf("create on loopback = %d, %q; want refused, saying why and how to allow it", code, errOut)
	}
	code, _, errOut = cmd("create", "https://93.184.215.14/hook", "--event", "run.exploded")
	if code == 0 || !strings.Contains(errOut, "run.exploded") {
		t.Errorf("create with an unknown event = %d, %q", code, errOut)
	}

	code, out, errOut = cmd("rm", id[1])
	checkRun(t, "rm", code, out, errOut, 0, []string{"deleted webhook " + id[1]}, nil)
	code, _, errOut = cmd("get", id[1])
	if code == 0 || !strings.Contains(errOut, "unknown webhook") {
		t.Errorf("get after rm = %d, %q", code, errOut)
	}
}

// The delivery log says when each delivery was last tried, beside what
// that attempt got; one not tried yet says so with "-". A webhook's last
// delivery says when it was queued and, once tried, last tried.
func TestDeliveriesSayWhenTheyWereLastTried(t *testing.T) {
	t.Parallel()
	queued := time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)
	tried := queued.Add(3 * time.Hour)
	retrying := &agentsv1.WebhookDelivery{Id: "msg_2", Kind: "run.failed", Seq: 12, Status: agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING,
		Attempts: 4, LastStatusCode: 503, LastError: "HTTP 503", LastAttempt: timestamppb.New(tried),
		NextAttempt: timestamppb.New(tried.Add(time.Minute)), Created: timestamppb.New(queued)}
	waiting := &agentsv1.WebhookDelivery{Id: "msg_3", Kind: "run.stopped", Seq: 13, Status: agentsv1.DeliveryStatus_DELIVERY_STATUS_PENDING,
		NextAttempt: timestamppb.New(tried), Created: timestamppb.New(tried)}
	var b strings.Builder
	if err := writeDeliveries(&b, []*agentsv1.WebhookDelivery{waiting, retrying}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("the log is %q, want a head and 2 rows", b.String())
	}
	for i, want := range [][]string{
		{"ID", "EVENT", "STATUS", "ATTEMPTS", "TRIED", "LAST", "NEXT"},
		{"msg_3", "run.stopped", "#13", "pending", "0", "-", "-", stamp(waiting.GetNextAttempt())},
		{"msg_2", "run.failed", "#12", "pending", "4", stamp(retrying.GetLastAttempt()), "HTTP 503", stamp(retrying.GetNextAttempt())},
	} {
		// A stamp is a date and a time: two fields.
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("line %d = %q, want the fields %q", i, lines[i], want)
		}
	}

	b.Reset()
	writeWebhook(&b, &agentsv1.Webhook{Id: "wh_1", LastDelivery: retrying})
	if want := "last         run.failed #12 pending HTTP 503, 4 attempts (queued " + stamp(retrying.GetCreated()) + ", last tried " + stamp(retrying.GetLastAttempt()) + ")"; !strings.Contains(b.String(), want) {
		t.Errorf("webhook:\n%s\nwant the line %q", b.String(), want)
	}
	b.Reset()
	writeWebhook(&b, &agentsv1.Webhook{Id: "wh_1", LastDelivery: waiting})
	if want := "last         run.stopped #13 pending, 0 attempts (queued " + stamp(waiting.GetCreated()) + ")\n"; !strings.Contains(b.String(), want) {
		t.Errorf("webhook:\n%s\nwant the line %q", b.String(), want)
	}
}

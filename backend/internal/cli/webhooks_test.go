package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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

package postgres

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// Issue 33, item 1: the store's connections find a database that is gone
// within a bound, with a statement in flight or none: keepalive probes,
// and a limit on how long what was sent may go unacknowledged.
func TestTheStoresSocketsFindADeadPeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg, err := pgx.ParseConfig("postgres://u@" + ln.Addr().String() + "/d")
	if err != nil {
		t.Fatal(err)
	}
	bound(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := cfg.DialFunc(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ level, opt, value int }{
		"SO_KEEPALIVE":     {unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
		"TCP_KEEPIDLE":     {unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, int(keepAliveIdle.Seconds())},
		"TCP_KEEPINTVL":    {unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, int(keepAliveInterval.Seconds())},
		"TCP_KEEPCNT":      {unix.IPPROTO_TCP, unix.TCP_KEEPCNT, keepAliveCount},
		"TCP_USER_TIMEOUT": {unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int((keepAliveIdle + keepAliveCount*keepAliveInterval).Milliseconds())},
	}
	for name, w := range want {
		var got int
		var gerr error
		if err := raw.Control(func(fd uintptr) { got, gerr = unix.GetsockoptInt(int(fd), w.level, w.opt) }); err != nil || gerr != nil {
			t.Fatalf("read %s: %v %v", name, err, gerr)
		}
		if got != w.value {
			t.Errorf("%s = %d, want %d", name, got, w.value)
		}
	}
	for name, want := range map[string]string{
		"idle_in_transaction_session_timeout": "5000",
		"lock_timeout":                        "10000",
		"statement_timeout":                   "60000",
		"tcp_keepalives_idle":                 "5",
	} {
		if got := cfg.RuntimeParams[name]; got != want {
			t.Errorf("setting %s = %q, want %q", name, got, want)
		}
	}

	// A setting the DSN makes is the operator's.
	cfg, err = pgx.ParseConfig("postgres://u@" + ln.Addr().String() + "/d?lock_timeout=30s")
	if err != nil {
		t.Fatal(err)
	}
	bound(cfg)
	if got := cfg.RuntimeParams["lock_timeout"]; got != "30s" {
		t.Errorf("lock_timeout set in the DSN = %q after bound, want 30s", got)
	}
}

package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListenUnixIsPrivateAndReplacesOnlyStaleSockets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	path := filepath.Join(dir, "run", "agents.sock")
	ln, err := listenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 || info.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket %v (%v), want a socket with mode 0600", info.Mode(), err)
	}
	if _, err := listenUnix(path); err == nil || !strings.Contains(err.Error(), "another server") {
		t.Errorf("a second listener on a live socket: %v, want refused", err)
	}
	_ = ln.Close()

	// A socket left behind by a crash (not unlinked) is replaced.
	stale := filepath.Join(dir, "stale.sock")
	crashed, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	crashed.SetUnlinkOnClose(false)
	_ = crashed.Close()
	again, err := listenUnix(stale)
	if err != nil {
		t.Fatalf("a stale socket was not replaced: %v", err)
	}
	_ = again.Close()

	// Anything else is never removed.
	file := filepath.Join(dir, "not-a-socket")
	writeFile(t, file, "data", 0o644)
	if _, err := listenUnix(file); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("a regular file: %v, want refused", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "data" {
		t.Error("the regular file was touched")
	}
}

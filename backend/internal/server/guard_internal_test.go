package server

import (
	"net"
	"testing"
)

// TestIsLoopbackNameAsParseIP: a Host is loopback exactly when net.ParseIP
// reads a loopback address from it (or it is a localhost name), zones,
// mapped and odd spellings included.
func TestIsLoopbackNameAsParseIP(t *testing.T) {
	for _, host := range []string{
		"127.0.0.1", "127.1.2.3", "128.0.0.1", "10.0.0.1", "0.0.0.0",
		"::1", "::", "::2", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
		"::1%lo", "fe80::1%eth0", "127.0.0.1%lo", "0177.0.0.1", "127.000.000.001", "127.1",
		"", "example.com", "localhost.example", "1.2.3.4.5",
	} {
		ip := net.ParseIP(host)
		want := ip != nil && ip.IsLoopback()
		if got := isLoopbackName(host); got != want {
			t.Errorf("isLoopbackName(%q) = %v, want %v (as net.ParseIP reads it)", host, got, want)
		}
	}
	for _, host := range []string{"localhost", "app.localhost"} {
		if !isLoopbackName(host) {
			t.Errorf("isLoopbackName(%q) = false, want true", host)
		}
	}
}

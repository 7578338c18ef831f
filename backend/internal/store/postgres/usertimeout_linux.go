package postgres

import (
	"errors"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// userTimeout makes a TCP connection fail once what it sent has gone
// unacknowledged for d. Keepalives only probe a connection with nothing
// in flight: a statement sent to a database whose machine or network
// vanished would otherwise wait for the kernel's retransmissions, a
// quarter of an hour.
func userTimeout(d time.Duration) func(network, address string, c syscall.RawConn) error {
	return func(network, _ string, c syscall.RawConn) error {
		if !strings.HasPrefix(network, "tcp") {
			return nil // a Unix socket has no peer to lose
		}
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
		})
		return errors.Join(err, serr)
	}
}

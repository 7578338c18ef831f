//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package postgres

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// closedOrTalking looks at an idle connection's socket without reading
// from it or waiting: it reports whether the server closed the
// connection, or sent something although no request is under way (the
// message of a backend being ended comes just before it closes).
func closedOrTalking(c net.Conn) bool {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	suspect := false
	err = raw.Control(func(fd uintptr) {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Nothing to read is the connection as it was left. A byte (a
		// message), none (closed) or an error (reset) is not.
		suspect = !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR)
	})
	return suspect || err != nil
}

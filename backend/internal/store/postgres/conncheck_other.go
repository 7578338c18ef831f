//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package postgres

import "net"

// closedOrTalking cannot look at the socket here: an idle connection is
// then checked with a round trip only after a second unused (pgx's
// default).
func closedOrTalking(net.Conn) bool { return false }

// Package cluster lets several servers on one PostgreSQL database hear
// each other: a notification bus (LISTEN/NOTIFY, or in memory for tests
// of several servers in one process), the sequencer that publishes every
// server's logged events to this server's hub in seq order, and the
// relay that carries live deltas, which are in no log, between servers.
//
// Notifications are hints, never the truth: a listener re-reads the
// store when one arrives, and after a reconnect (when some may have been
// lost), so a lost notification delays a reader but never misleads it.
// Only deltas travel in the payload, and they are best-effort by design.
package cluster

import (
	"context"
	"errors"

	"github.com/agents-os/agents/backend/internal/errs"
)

// Bus carries notifications between the servers of one database.
type Bus interface {
	// Notify sends payload to every listener of channel, on every server
	// (this one included). A payload of MaxPayload bytes or more is
	// refused.
	Notify(ctx context.Context, channel, payload string) error
	// Listen calls fn for every notification on channel, in order, on the
	// bus's goroutine; fn must not block. cancel stops it. Once Listen
	// returns, fn hears every notification sent, or OnReconnect's
	// functions are called after those it missed.
	Listen(channel string, fn func(payload string)) (cancel func())
	// OnReconnect is called after the bus lost its connection and got it
	// back: notifications in between may be lost, so listeners re-read.
	OnReconnect(fn func())
	Close() error
}

// The channels, one per thing a server may need to hear about.
const (
	ChannelEvents      = "agents_events"       // payload: newest seq
	ChannelDeltas      = "agents_deltas"       // payload: a chunk of a delta event
	ChannelCommands    = "agents_commands"     // payload: the holder to wake
	ChannelCommandDone = "agents_command_done" // payload: the command id, then a space and its answer when the answer fits
	ChannelLeases      = "agents_leases"       // payload: a session id released that needs a server, or ReleasedPrefix and one that needs none
	ChannelMail        = "agents_mail"         // payload: a session id that got mail
	ChannelAgents      = "agents_agents"       // payload: the server that changed a stored agent

	// ReleasedPrefix begins the payload on ChannelLeases of a session let
	// go that needs no server now (no run, no mail): the servers forget
	// who held it, and nobody need take it.
	ReleasedPrefix = "released "
)

// MaxPayload is the size, in bytes, from which a payload is refused:
// PostgreSQL's NOTIFY takes payloads shorter than 8000 bytes.
const MaxPayload = 8000

// checkPayload refuses a payload NOTIFY would refuse, with the same
// answer on every Bus.
func checkPayload(channel, payload string) error {
	if len(payload) >= MaxPayload {
		return errs.TooLarge(errs.CodeNotificationTooLarge, "a notification on %s has %d bytes; it must be under %d", channel, len(payload), MaxPayload)
	}
	return nil
}

// ErrClosed is Notify's answer once the bus is closed.
var ErrClosed = errors.New("cluster: bus closed")

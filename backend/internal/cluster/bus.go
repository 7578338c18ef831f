// Package cluster lets several servers on one PostgreSQL database hear
// each other through a notification bus.
package cluster

import "context"

// Bus carries notifications between the servers of one database.
type Bus interface {
	Notify(ctx context.Context, channel, payload string) error
	// Listen calls fn for every notification on channel, in order, on the
	// bus's goroutine; fn must not block. cancel stops it.
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
	ChannelCommandDone = "agents_command_done" // payload: the command id
	ChannelLeases      = "agents_leases"       // payload: a session id released / needing a server
	ChannelMail        = "agents_mail"         // payload: a session id that got mail
)

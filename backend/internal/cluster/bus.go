// Package cluster carries what servers sharing one database tell each
// other: notifications that wake a server for a session, a command or an
// event another server stored. Every notification is a hint; what it
// points at is in the database, so a lost one costs a delay, never data.
package cluster

import "context"

// Bus delivers notifications between the servers of one database.
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

// The channels.
const (
	ChannelEvents      = "agents_events"       // payload: newest seq
	ChannelDeltas      = "agents_deltas"       // payload: a chunk of a delta event
	ChannelCommands    = "agents_commands"     // payload: the holder to wake
	ChannelCommandDone = "agents_command_done" // payload: the command id
	ChannelLeases      = "agents_leases"       // payload: a session id released / needing a server
	ChannelMail        = "agents_mail"         // payload: a session id that got mail
)

// Package events is the server's event hub: it keeps the newest events in
// memory so reconnecting clients can replay what they missed, replays older
// ones from the durable event log, and fans events out to subscribers
// without ever making the publisher wait.
//
// # Positions
//
// Every event except the deltas (of text, thinking, and tool calls being
// written) is stored in the event log (see package store) in the
// transaction that makes the change it describes; its seq is the log's,
// so it keeps its meaning across restarts. The publisher (the runner) commits and then publishes, with
// its commits serialised, so logged events reach the hub in seq order.
// Deltas are not logged: PublishDelta stamps them with the newest seq and
// a delta counter of the hub, which carries the hub's tag (see Position).
// (Seq, Delta) is a Position; it orders every event of the hub, and a
// logged event is (seq, 0). Start tells the hub where the log is when the
// process starts. A position of another hub places the logged events and
// none of this hub's deltas (see SubscribeAt).
//
// # Rings
//
// Logged events and deltas have a ring each, bounded by count and by the
// bytes they keep, so deltas never push logged events out of the replay
// window and a few huge events cannot pin much memory. A ring keeps each
// event's protobuf encoding, not the event, and a replay decodes it; the
// budgets are small (1 MiB and 256 KiB by default), since the log serves
// older positions. A subscription
// after a position the ring no longer covers reads the log (Options.Log),
// and so does one after a logged event the hub has not been given yet
// (another server's, committed before this server's follower published
// it); one the log cannot place either (pruned, or beyond anything in
// it) gets a snapshot.
//
// Deltas are in no log: a replay needs every delta after the position
// that its scope matches to be in the delta ring. That ring is one for
// the process, so one session's deltas push out another's; it remembers,
// per session and per owner, the newest delta it pushed out, and a
// subscription of a scope that lost a delta after its position gets a
// snapshot, never a replay with a hole in the text. Deltas of the process
// before a restart are not counted as lost: their turns ended with it.
//
// Subcall events are stamped with the parent session, so the parent's
// subscribers see them. A published event is shared: every live
// subscriber gets the same pointer, and Frame caches its encodings once
// for all of them (and for copies replayed from the ring or the log)
// while a ring holds it, counting them against the ring's budget. Neither the publisher nor any consumer may modify it (or
// anything it points to) after Publish.
//
// # Locking
//
// One mutex guards the seq counter, the ring and the subscriber index. The
// critical section of Publish does a constant amount of bookkeeping plus one
// non-blocking channel send per matching subscriber; subscribers are indexed
// by scope, so an event only touches the subscribers of its session and owner,
// the all-scope subscribers, and (for server-wide events only) every owner
// subscriber. A scope may be narrowed to some kinds (Scope.OfKinds); the
// index keeps each subscriber's kinds beside it, so one that wants none of
// an event's kind costs a bit test and is never queued to or woken. A
// subscriber whose queue is full is cut on the spot: its channel
// is closed with the reason lagged and it is dropped from the index, so a slow
// client can never slow the runner.
//
// SubscribeAt registers the subscriber and copies the replayed events into
// its channel in the same critical section, which is what makes replay
// gap-free and duplicate-free; a replay from the log reads the log first,
// outside the lock, then takes the rest from the ring under it. Close, the lagged cut and Shutdown all end a
// subscription under the same mutex, so they cannot race each other.
//
// # Consuming
//
// A server stream loop looks like this:
//
//	sub, err := hub.SubscribeAt(ctx, scope, after)
//	if err != nil {
//		return err
//	}
//	defer sub.Close()
//	if sub.Mode() == events.ModeSnapshot {
//		send(snapshotOf(scope, sub.SnapshotPosition()))
//	}
//	for {
//		select {
//		case <-ctx.Done():
//			return
//		case <-heartbeat.C:
//			send(ping)
//		case ev, ok := <-sub.C():
//			if !ok {
//				if lagged, last := sub.Lagged(); lagged {
//					send(laggedItem(last))
//				}
//				return
//			}
//			send(ev)
//		}
//	}
//
// Events already queued when a subscription is cut stay readable: the channel
// is closed behind them, so draining C() delivers everything up to the seq
// that Lagged reports.
package events

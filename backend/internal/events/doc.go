// Package events is the server's event hub: it numbers every event, keeps the
// newest ones in a ring so reconnecting clients can replay what they missed,
// and fans events out to subscribers without ever making the publisher wait.
//
// # Publishing
//
// The runner publishes; Publish stamps the event's seq (server-wide, strictly
// increasing, starting at 1) and time, stores it in the ring and offers it to
// every subscriber whose Scope matches. Publishers fill session_id, owner,
// kind and body. Subcall events are stamped with the parent session, so the
// parent's subscribers see them.
//
// A published event is shared: the ring and every subscriber hold the same
// pointer. Neither the publisher nor any consumer may modify it (or anything
// it points to) after Publish. A publisher must not publish the same event
// twice.
//
// A publisher should persist a change before publishing the event that
// describes it. A snapshot built from the store after Subscribe then reflects
// every event up to Subscription.SnapshotSeq.
//
// # Locking
//
// One mutex guards the seq counter, the ring and the subscriber index. The
// critical section of Publish does a constant amount of bookkeeping plus one
// non-blocking channel send per matching subscriber; subscribers are indexed
// by scope, so an event only touches the subscribers of its session and owner,
// the all-scope subscribers, and (for server-wide events only) every owner
// subscriber. A subscriber whose queue is full is cut on the spot: its channel
// is closed with the reason lagged and it is dropped from the index, so a slow
// client can never slow the runner.
//
// Subscribe registers the subscriber and copies the replayed part of the ring
// into its channel in the same critical section, which is what makes replay
// gap-free and duplicate-free. Close, the lagged cut and Shutdown all end a
// subscription under the same mutex, so they cannot race each other.
//
// # Consuming
//
// A server stream loop looks like this:
//
//	sub, mode := hub.Subscribe(scope, after)
//	defer sub.Close()
//	if mode == events.ModeSnapshot {
//		send(snapshotOf(scope, sub.SnapshotSeq()))
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

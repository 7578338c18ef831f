package cluster

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store"
)

// Sequencer publishes every logged event, this server's and the other
// servers', to this server's hub, in seq order and once each.
//
// Positions become visible in order (store.EventLog): a reader that sees
// seq n sees every event up to n, and never waits for a missing seq. The
// sequencer reads the log after the newest seq it published: when this
// server's committer hands it an event further on (other servers
// committed in between), when a server's numbering of events notifies
// ChannelEvents, after the bus reconnects, and on a poll as a safety
// net. On the poll it also numbers the events that wait for a position
// (store.EventLog.NumberEvents): a commit's own numbering is what
// normally gives them, and this is for one whose server stopped before
// it, or that could not wait. While some wait, it numbers and reads
// every pendingPoll.
type Sequencer struct {
	hub *events.Hub
	log store.EventLog
	lg  *slog.Logger

	// mu orders publishing; last is the newest seq published (written
	// under mu, read without it to skip needless reads).
	mu   sync.Mutex
	last atomic.Uint64
	// lag is how long, in nanoseconds, the newest event read from the
	// log took from its time to the hub.
	lag atomic.Int64
	// pending says events wait for a position: numbering is tried every
	// pendingPoll until none does.
	pending atomic.Bool

	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	stop   func()
}

// SequencerOptions configure a Sequencer.
type SequencerOptions struct {
	// Poll is how often the log is read with no notification; zero is
	// DefaultPoll.
	Poll time.Duration
	// Log takes what goes wrong; nil discards it.
	Log *slog.Logger
}

// DefaultPoll is the safety net under notifications: an event a lost
// notification hid reaches this server's subscribers within it.
const DefaultPoll = time.Second

// readBatch bounds the events one read of the log returns.
const readBatch = 500

// pendingPoll is how often the sequencer numbers events while some wait
// for a position: a transaction that began before theirs holds them back
// until it ends, mostly for as long as a commit takes.
const pendingPoll = 10 * time.Millisecond

// NewSequencer starts following log for hub, from the hub's newest seq
// (hub.Start must have placed it), listening on bus. Close stops it.
func NewSequencer(hub *events.Hub, log store.EventLog, bus Bus, opts SequencerOptions) *Sequencer {
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sequencer{hub: hub, log: log, lg: opts.Log, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	s.last.Store(hub.Seq())
	s.stop = bus.Listen(ChannelEvents, func(payload string) {
		// A payload at or below what is published says nothing new:
		// this server's own commits, mostly.
		if n, err := strconv.ParseUint(payload, 10, 64); err == nil && n <= s.last.Load() {
			return
		}
		s.kick()
	})
	bus.OnReconnect(s.kick)
	// The log may have moved between hub.Start and Listen.
	s.kick()
	go s.loop(opts.Poll)
	return s
}

// Committed publishes an event this server's committer committed, after
// the events other servers committed before it. An event already
// published (read from the log first) is skipped. When the log cannot be
// read the event is left to the follower, which publishes it, in its
// place, once the log reads again.
//
// An event the commit could not give its position (Seq 0) is published
// from the log once numbering gives it one.
func (s *Sequencer) Committed(ev *agentsv1.Event, body []byte) error {
	if ev.Seq == 0 {
		s.pending.Store(true)
		s.kick()
		return nil
	}
	last := s.last.Load()
	if ev.Seq <= last {
		return nil
	}
	var gap []store.Event
	if ev.Seq > last+1 {
		var err error
		if gap, err = s.read(last, ev.Seq); err != nil {
			s.kick()
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range gap {
		s.publishRow(e)
	}
	if ev.Seq > s.last.Load() {
		s.publish(ev, body)
	}
	return nil
}

// Close stops following the log.
func (s *Sequencer) Close() {
	s.stop()
	s.cancel()
	<-s.done
}

func (s *Sequencer) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Sequencer) loop(poll time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	soon := time.NewTimer(pendingPoll)
	defer soon.Stop()
	failing := false
	number := true // the log may hold events a stopped server left unnumbered
	for {
		if number {
			pending, err := s.log.NumberEvents(s.ctx)
			if err == nil {
				s.pending.Store(pending)
			}
		}
		// One line when reading starts failing and one when it works
		// again, not one per poll while the database is away.
		switch err := s.follow(); {
		case err != nil && s.ctx.Err() == nil && !failing:
			failing = true
			s.lg.Warn("cannot read the event log; other servers' events wait", "after", s.last.Load(), "err", err)
		case err == nil && failing:
			failing = false
			s.lg.Info("reading the event log again", "at", s.last.Load())
		}
		if s.pending.Load() {
			soon.Reset(pendingPoll)
		}
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
			number = s.pending.Load()
		case <-tick.C:
			number = true
		case <-soon.C:
			number = s.pending.Load()
		}
	}
}

// follow publishes everything in the log after the newest seq published.
func (s *Sequencer) follow() error {
	for {
		rows, err := s.log.EventsAfter(s.ctx, store.EventFilter{All: true}, s.last.Load(), readBatch)
		if err != nil {
			return err
		}
		s.mu.Lock()
		for _, e := range rows {
			s.publishRow(e)
		}
		s.mu.Unlock()
		if len(rows) < readBatch {
			return nil
		}
	}
}

// read returns the events in the log above after and below before.
func (s *Sequencer) read(after, before uint64) ([]store.Event, error) {
	var out []store.Event
	for {
		rows, err := s.log.EventsAfter(s.ctx, store.EventFilter{All: true}, after, readBatch)
		if err != nil {
			return nil, err
		}
		for _, e := range rows {
			if e.Seq >= before {
				return out, nil
			}
			out = append(out, e)
		}
		if len(rows) < readBatch {
			return out, nil
		}
		after = rows[len(rows)-1].Seq
	}
}

// publishRow publishes an event read from the log unless it is published
// already. Called under mu.
func (s *Sequencer) publishRow(e store.Event) {
	if e.Seq <= s.last.Load() {
		return
	}
	ev := &agentsv1.Event{}
	if err := proto.Unmarshal(e.Body, ev); err != nil {
		// Never publishable: step over it, or the log is read from here
		// for ever.
		s.lg.Error("decode a logged event", "seq", e.Seq, "session", e.SessionID, "err", err)
		s.last.Store(e.Seq)
		return
	}
	ev.Seq = e.Seq
	s.publish(ev, e.Body)
	if !e.Time.IsZero() {
		s.lag.Store(int64(time.Since(e.Time)))
	}
}

// Lag is how long the newest event this server read from the log (another
// server's, or now and then one of its own that the log gave first) took
// from its time, on the clock of the server that made it, to this
// server's hub; zero before the first.
func (s *Sequencer) Lag() time.Duration { return time.Duration(s.lag.Load()) }

// publish gives ev to the hub. Called under mu.
func (s *Sequencer) publish(ev *agentsv1.Event, body []byte) {
	s.last.Store(ev.Seq)
	if _, err := s.hub.PublishEncoded(ev, body); err != nil {
		s.lg.Error("publish a logged event", "session", ev.GetSessionId(), "seq", ev.GetSeq(), "err", err)
	}
}

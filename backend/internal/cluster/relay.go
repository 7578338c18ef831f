package cluster

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protodelim"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
)

// Relay carries the live deltas of this server's runs to the other
// servers, and theirs to this server's hub, so a subscriber on any
// server streams a run on any other. Deltas are in no log, so they
// travel in the notifications themselves: best-effort, as the design
// says. A delta lost on the way (a full queue, a dropped connection, a
// message whose parts did not all arrive) leaves a hole in the text of
// the turn in progress on the other servers until the turn is logged;
// the order within a session always holds.
//
// A message packs the deltas queued together, each length-delimited
// protobuf, in base64, cut into parts under the payload limit. Each
// part's payload is "<server> <message> <part>/<parts> <data>".
type Relay struct {
	hub    *events.Hub
	bus    Bus
	server string
	lg     *slog.Logger

	mu      sync.Mutex
	queue   []*agentsv1.Event
	wake    chan struct{}
	dropped atomic.Uint64
	next    uint64 // the sender's message counter
	failing bool   // the last Notify failed: log the next failure only after a success

	// partial holds the messages of other servers whose parts are still
	// coming; only the bus's goroutine touches it.
	partial map[partKey]*partial

	stop   func()
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

type partKey struct {
	server string
	msg    uint64
}

type partial struct {
	parts []string
	got   int
	first time.Time
}

// Limits of the relay.
const (
	// relayQueue bounds the deltas waiting to be sent; more are dropped.
	relayQueue = 4096
	// relayRaw is how many bytes of encoded deltas one message packs
	// when it has several: their base64 fits one part.
	relayRaw = 5400
	// partialTTL is how long the parts of a message wait for the rest.
	partialTTL = 5 * time.Second
	// maxPartial bounds the messages waiting for parts.
	maxPartial = 256
	// maxParts bounds the parts of a message (about 1.4 MB of deltas).
	maxParts = 256
	// maxServerID bounds a server id, which every part carries.
	maxServerID = 128
	// notifyTimeout bounds one Notify of a part.
	notifyTimeout = 5 * time.Second
)

// ValidServerID checks an id a server gives itself: it names the server
// in its leases and in every part it relays.
func ValidServerID(id string) error {
	switch {
	case id == "":
		return errors.New("a server id must not be empty")
	case len(id) > maxServerID:
		return fmt.Errorf("server id %q is longer than %d bytes", id, maxServerID)
	case strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Errorf("server id %q has a space or a control character", id)
	}
	return nil
}

// NewRelay starts relaying between hub and the other servers on bus.
// server is this server's id (see ValidServerID). Close stops it.
func NewRelay(hub *events.Hub, bus Bus, server string, log *slog.Logger) (*Relay, error) {
	if err := ValidServerID(server); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Relay{hub: hub, bus: bus, server: server, lg: log, wake: make(chan struct{}, 1),
		partial: map[partKey]*partial{}, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	// Its deltas and the other servers' meet in the hub now, in the
	// order they reach it: a bare seq no longer places them.
	hub.SetRelayed()
	r.stop = bus.Listen(ChannelDeltas, r.receive)
	go r.loop()
	return r, nil
}

// Send relays a delta this server published to its hub. It never blocks:
// when the queue is full the delta is dropped. ev belongs to the hub and
// is only read.
func (r *Relay) Send(ev *agentsv1.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) >= relayQueue {
		r.dropped.Add(1)
		return
	}
	r.queue = append(r.queue, ev)
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Dropped returns how many deltas were not sent because the queue was
// full.
func (r *Relay) Dropped() uint64 { return r.dropped.Load() }

// Close stops relaying; deltas still queued are dropped.
func (r *Relay) Close() {
	r.stop()
	r.cancel()
	<-r.done
}

func (r *Relay) loop() {
	defer close(r.done)
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.wake:
		}
		r.mu.Lock()
		q := r.queue
		r.queue = nil
		r.mu.Unlock()
		for len(q) > 0 && r.ctx.Err() == nil {
			var msg []byte
			msg, q = pack(q)
			r.send(msg)
		}
	}
}

// pack encodes the first deltas of q into one message: as many as fit
// relayRaw bytes, and always at least one.
func pack(q []*agentsv1.Event) (msg []byte, rest []*agentsv1.Event) {
	var buf bytes.Buffer
	for i, ev := range q {
		var one bytes.Buffer
		// Its position goes too, but the receiving hub gives its own.
		if _, err := protodelim.MarshalTo(&one, ev); err != nil {
			continue
		}
		if i > 0 && buf.Len()+one.Len() > relayRaw {
			return buf.Bytes(), q[i:]
		}
		buf.Write(one.Bytes())
	}
	return buf.Bytes(), nil
}

// send notifies one message, in parts.
func (r *Relay) send(msg []byte) {
	if len(msg) == 0 {
		return
	}
	r.next++
	data := base64.StdEncoding.EncodeToString(msg)
	// The header's widest: the id, the counter, and part/parts.
	room := MaxPayload - 1 - len(r.server) - 3*20 - 4
	parts := (len(data) + room - 1) / room
	if parts > maxParts {
		r.lg.Warn("a delta too large to relay", "bytes", len(msg))
		return
	}
	for i := range parts {
		chunk := data[i*room : min(len(data), (i+1)*room)]
		payload := r.server + " " + strconv.FormatUint(r.next, 10) + " " + strconv.Itoa(i+1) + "/" + strconv.Itoa(parts) + " " + chunk
		ctx, cancel := context.WithTimeout(r.ctx, notifyTimeout)
		err := r.bus.Notify(ctx, ChannelDeltas, payload)
		cancel()
		if err != nil {
			if !r.failing && r.ctx.Err() == nil {
				r.lg.Warn("relay live deltas to the other servers", "err", err)
			}
			r.failing = true
			return // the rest of the message is no use
		}
		r.failing = false
	}
}

// receive takes a part from the bus: another server's, since a server
// ignores its own, and publishes the deltas of each message once it has
// all of its parts.
func (r *Relay) receive(payload string) {
	server, msg, part, parts, data, ok := parsePart(payload)
	if !ok {
		r.lg.Warn("a relayed delta that does not parse", "bytes", len(payload))
		return
	}
	if server == r.server {
		return
	}
	now := time.Now()
	r.expire(now)
	if parts == 1 {
		r.publish(data)
		return
	}
	k := partKey{server, msg}
	p := r.partial[k]
	if p == nil {
		if part != 1 || len(r.partial) >= maxPartial {
			return // its beginning was lost, or too many are pending
		}
		p = &partial{parts: make([]string, parts), first: now}
		r.partial[k] = p
	}
	if len(p.parts) != parts || p.parts[part-1] != "" {
		delete(r.partial, k)
		return
	}
	p.parts[part-1] = data
	p.got++
	if p.got == parts {
		delete(r.partial, k)
		r.publish(strings.Join(p.parts, ""))
	}
}

// expire drops the messages whose parts stopped coming.
func (r *Relay) expire(now time.Time) {
	for k, p := range r.partial {
		if now.Sub(p.first) > partialTTL {
			delete(r.partial, k)
		}
	}
}

// publish decodes a whole message and publishes its deltas to the hub.
func (r *Relay) publish(data string) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		r.lg.Warn("a relayed delta that does not decode", "err", err)
		return
	}
	in := bytes.NewReader(raw)
	for {
		ev := &agentsv1.Event{}
		if err := protodelim.UnmarshalFrom(in, ev); err != nil {
			if !errors.Is(err, io.EOF) {
				r.lg.Warn("a relayed delta that does not decode", "err", err)
			}
			return
		}
		if !isDelta(ev) {
			continue // only deltas travel here
		}
		r.hub.PublishDelta(ev)
	}
}

// isDelta reports whether ev is a live delta: text, thinking or a tool
// call being written.
func isDelta(ev *agentsv1.Event) bool {
	switch ev.GetBody().(type) {
	case *agentsv1.Event_TextDelta, *agentsv1.Event_ThinkingDelta, *agentsv1.Event_ToolCallDelta:
		return true
	}
	return false
}

// parsePart splits a part's payload.
func parsePart(payload string) (server string, msg uint64, part, parts int, data string, ok bool) {
	f := strings.SplitN(payload, " ", 4)
	if len(f) != 4 {
		return
	}
	num, den, found := strings.Cut(f[2], "/")
	if !found {
		return
	}
	var err1, err2, err3 error
	msg, err1 = strconv.ParseUint(f[1], 10, 64)
	part, err2 = strconv.Atoi(num)
	parts, err3 = strconv.Atoi(den)
	if err1 != nil || err2 != nil || err3 != nil || parts < 1 || parts > maxParts || part < 1 || part > parts {
		return
	}
	return f[0], msg, part, parts, f[3], true
}

package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// ReadFrames reads server-sent events from r and calls fn with the kind
// (the `event:` field, "message" when absent), the data and the time the
// read that completed the frame returned, for each frame. Comments
// (heartbeats) are skipped. It returns when fn returns false, at the end
// of the stream (nil) or on a read error. kind and data are valid until
// fn returns.
//
// It is the fan-out's client, a thousand of them on the machine the
// server runs on, so it costs what a client must and little more: the
// frames are parsed where they were read, with nothing allocated for
// them, and the clock is read once a read, not once a frame.
func ReadFrames(r io.Reader, fn func(kind, data []byte, at time.Time) bool) error {
	buf := make([]byte, 64<<10)
	var joined []byte // the data of a frame of several data lines
	held := 0         // bytes of buf read and not yet parsed
	for {
		n, err := r.Read(buf[held:])
		at := time.Now()
		held += n
		start := 0 // of the first frame not yet whole
		for {
			size, kind, data, ok := nextFrame(buf[start:held], &joined)
			if size == 0 {
				break
			}
			start += size
			if ok && !fn(kind, data, at) {
				return nil
			}
		}
		held = copy(buf, buf[start:held])
		if held == len(buf) {
			// A frame longer than the buffer: make room for all of it.
			buf = append(buf, make([]byte, len(buf))...)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

var messageKind = []byte("message")

// nextFrame parses the frame at the start of b: its size in bytes up to
// and with the blank line that ends it, 0 when b holds no whole frame;
// its kind and data; ok when it had data (a frame of comments only has
// none). The data of several data lines is joined in *joined.
func nextFrame(b []byte, joined *[]byte) (size int, kind, data []byte, ok bool) {
	kind = messageKind
	lines := 0 // data lines
	for i := 0; ; {
		end := bytes.IndexByte(b[i:], '\n')
		if end < 0 {
			return 0, nil, nil, false
		}
		line := b[i : i+end]
		i += end + 1
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			return i, kind, data, lines > 0
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			kind = value
		case "data":
			switch lines++; lines {
			case 1:
				data = value
			case 2:
				*joined = append(append(append((*joined)[:0], data...), '\n'), value...)
				data = *joined
			default:
				*joined = append(append(*joined, '\n'), value...)
				data = *joined
			}
		}
	}
}

// EventTime returns the `time` field of an event's JSON without decoding
// the rest of it: a subscriber of a busy server has thousands of frames a
// second to read on a machine it shares with the server.
func EventTime(data []byte) (time.Time, bool) {
	const key = `"time":"`
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return time.Time{}, false
	}
	rest := data[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:end]))
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// subscriber is one client of GET /v1/events.
type subscriber struct {
	body io.ReadCloser

	// Counted by the subscriber's reader and summed by the run, which
	// may look while a late reader still reads.
	frames  atomic.Int64 // events received
	stopped atomic.Int64 // run.stopped events received

	mu     sync.Mutex
	delays []time.Duration // for each run.stopped: receive time − event time
	lagged bool            // the server ended the stream as lagged
	err    error           // why the stream ended early
}

// subscribe opens the owner's event stream, of the kinds given (a
// comma-separated list; empty for every kind).
func subscribe(ctx context.Context, hc *http.Client, base, kinds string) (*subscriber, error) {
	path := "/v1/events"
	if kinds != "" {
		path += "?kinds=" + url.QueryEscape(kinds)
	}
	req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /v1/events: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("GET /v1/events: %s: %s", resp.Status, b)
	}
	return &subscriber{body: resp.Body}, nil
}

// read consumes the stream until it ends; done is called once, when
// wantStopped run.stopped events have arrived or the stream ended.
func (s *subscriber) read(wantStopped int, done func()) {
	var once sync.Once
	finish := func() { once.Do(done) }
	defer finish()
	err := ReadFrames(s.body, func(kind, data []byte, at time.Time) bool {
		s.frames.Add(1)
		switch string(kind) {
		case "run.stopped":
			t, ok := EventTime(data)
			s.mu.Lock()
			if ok {
				s.delays = append(s.delays, at.Sub(t))
			}
			s.mu.Unlock()
			if s.stopped.Add(1) == int64(wantStopped) {
				finish()
			}
		case "lagged":
			s.mu.Lock()
			s.lagged = true
			s.mu.Unlock()
			return false
		}
		return true
	})
	s.mu.Lock()
	if err != nil && s.stopped.Load() < int64(wantStopped) {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *subscriber) close() { s.body.Close() }

package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// ReadFrames reads server-sent events from r and calls fn with the kind
// (the `event:` field, "message" when absent) and the data of each frame.
// Comments (heartbeats) are skipped. It returns when fn returns false, at
// the end of the stream (nil) or on a read error.
func ReadFrames(r io.Reader, fn func(kind string, data []byte) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var kind string
	var data []byte
	hasData := false
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: keep reading it whole.
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if hasData {
				if kind == "" {
					kind = "message"
				}
				if !fn(kind, data) {
					return nil
				}
			}
			kind, data, hasData = "", data[:0], false
		case line[0] == ':':
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				kind = string(value)
			case "data":
				if hasData {
					data = append(data, '\n')
				}
				data, hasData = append(data, value...), true
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

	mu      sync.Mutex
	frames  int             // events received
	stopped int             // run.stopped events received
	delays  []time.Duration // for each run.stopped: receive time − event time
	lagged  bool            // the server ended the stream as lagged
	err     error           // why the stream ended early
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
	err := ReadFrames(s.body, func(kind string, data []byte) bool {
		now := time.Now()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.frames++
		switch kind {
		case "run.stopped":
			s.stopped++
			if t, ok := EventTime(data); ok {
				s.delays = append(s.delays, now.Sub(t))
			}
			if s.stopped == wantStopped {
				finish()
			}
		case "lagged":
			s.lagged = true
			return false
		}
		return true
	})
	s.mu.Lock()
	if err != nil && s.stopped < wantStopped {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *subscriber) close() { s.body.Close() }

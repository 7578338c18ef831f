package llm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// errEventTooLarge: an event's data, or a line of the stream, is longer
// than the reader's limit.
var errEventTooLarge = errors.New("llm: stream event too large")

// sseReader reads the data of server-sent events, one event at a time.
// Comments, event names and ids are skipped: chat-completions streams carry
// everything in data. An event's data may be as long as limit, since a
// single chunk can hold a whole tool call, and no longer: a stream that
// never ends its line is not buffered without end.
type sseReader struct {
	r     *bufio.Reader
	limit int
	// data holds the event next returns, and long a line longer than r's
	// buffer; both are kept from one event to the next.
	data, long []byte
}

// lineOverhead is what a line may hold besides an event's data: the
// "data: " field name and the line end.
const lineOverhead = len("data: \r\n")

// newSSEReader uses bufio's default 4 KiB buffer: a longer line is
// collected across refills. A stream is opened per model call, so the
// readers are pooled with their buffers: release gives one back when its
// stream is read.
func newSSEReader(r io.Reader, limit int) *sseReader {
	s := sseReaders.Get().(*sseReader)
	s.r.Reset(r)
	s.limit = limit
	return s
}

var sseReaders = sync.Pool{New: func() any { return &sseReader{r: bufio.NewReader(nil)} }}

// maxPooledEvent is the longest event or line whose buffer a reader keeps
// in the pool; one a rare large event grew is dropped with its stream.
const maxPooledEvent = 64 << 10

// release gives the reader back; neither it nor what next returned is
// used again.
func (s *sseReader) release() {
	s.r.Reset(nil)
	if cap(s.data) > maxPooledEvent {
		s.data = nil
	}
	if cap(s.long) > maxPooledEvent {
		s.long = nil
	}
	sseReaders.Put(s)
}

// next returns the data of the next event, its data lines joined by "\n". It
// returns io.EOF once the body ends with no event pending. The data is
// valid until the next call.
func (s *sseReader) next() ([]byte, error) {
	data := s.data[:0]
	defer func() { s.data = data[:0] }()
	haveData := false
	for {
		line, err := s.line()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		atEOF := err != nil
		line = bytes.TrimRight(line, "\r\n")

		switch {
		case len(line) == 0:
			if haveData && !atEOF {
				return data, nil
			}
		case line[0] == ':':
			// comment, used as a keep-alive
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			if string(field) == "data" {
				if haveData {
					data = append(data, '\n')
				}
				if len(data)+len(value) > s.limit {
					return nil, errEventTooLarge
				}
				data = append(data, value...)
				haveData = true
			}
		}

		if atEOF {
			if haveData {
				return data, nil
			}
			return nil, io.EOF
		}
	}
}

// line reads the next line, its end included. The slice is valid until the
// next call. A line longer than the limit allows fails once that much of it
// has been read.
func (s *sseReader) line() ([]byte, error) {
	maxLine := s.limit + lineOverhead
	frag, err := s.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(frag) > maxLine {
			return nil, errEventTooLarge
		}
		return frag, err
	}
	line := append(s.long[:0], frag...)
	defer func() { s.long = line[:0] }()
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > maxLine {
			return nil, errEventTooLarge
		}
		frag, err = s.r.ReadSlice('\n')
		line = append(line, frag...)
	}
	if len(line) > maxLine {
		return nil, errEventTooLarge
	}
	return line, err
}

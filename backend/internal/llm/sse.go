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
}

// lineOverhead is what a line may hold besides an event's data: the
// "data: " field name and the line end.
const lineOverhead = len("data: \r\n")

// newSSEReader uses bufio's default 4 KiB buffer: a longer line is
// collected across refills. A stream is opened per model call, so the
// buffers are pooled: release gives one back when its stream is read.
func newSSEReader(r io.Reader, limit int) *sseReader {
	br := sseBuffers.Get().(*bufio.Reader)
	br.Reset(r)
	return &sseReader{r: br, limit: limit}
}

var sseBuffers = sync.Pool{New: func() any { return bufio.NewReader(nil) }}

// release gives the reader's buffer back; the reader is not used again.
// What next returned stays valid: it is never the buffer's.
func (s *sseReader) release() {
	if s.r == nil {
		return
	}
	s.r.Reset(nil)
	sseBuffers.Put(s.r)
	s.r = nil
}

// next returns the data of the next event, its data lines joined by "\n". It
// returns io.EOF once the body ends with no event pending.
func (s *sseReader) next() ([]byte, error) {
	var data []byte
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
	line := append([]byte(nil), frag...)
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

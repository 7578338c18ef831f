package llm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sseReader reads the data of server-sent events, one event at a time.
// Comments, event names and ids are skipped: chat-completions streams carry
// everything in data. Lines have no length limit, since a single chunk can
// hold a whole tool call.
type sseReader struct {
	r *bufio.Reader
}

// newSSEReader uses bufio's default 4 KiB buffer: ReadBytes collects a
// longer line across refills, and a stream is opened per model call, so a
// bigger buffer would only be allocated (and collected) again every step.
func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReader(r)}
}

// next returns the data of the next event, its data lines joined by "\n". It
// returns io.EOF once the body ends with no event pending.
func (s *sseReader) next() ([]byte, error) {
	var data []byte
	haveData := false
	for {
		line, err := s.r.ReadBytes('\n')
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

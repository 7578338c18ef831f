// Package sse writes the server-sent-events frames of the event routes
// (GET /v1/events, GET /v1/sessions/{id}/events) and parses the position a
// reconnecting client sends back.
//
// Every frame is built whole and handed to the writer in one Write, so a
// failed or concurrent write never leaves half a frame on the wire. Flushing
// is the caller's job.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/events"
	"google.golang.org/protobuf/proto"
)

// Names of the frames that carry something other than an event.
const (
	SnapshotEvent = "snapshot"
	LaggedEvent   = "lagged"
)

// WriteEvent writes ev as one frame: its position as the id ("seq", or
// "seq.delta" for a delta), its kind as the event
// name, and the Event as the JSON routes write it (apijson) as the data. An event without a kind gets
// no event line, which SSE clients read as "message".
func WriteEvent(w io.Writer, ev *agentsv1.Event) error {
	b, err := EventFrame(ev)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// EventFrame is the frame WriteEvent writes, for a caller that shares
// one encoding between subscribers (events.Hub.Frame).
func EventFrame(ev *agentsv1.Event) ([]byte, error) {
	if ev == nil {
		return nil, errors.New("sse: nil event")
	}
	return frameBytes(events.PositionOf(ev).String(), ev.GetKind(), ev)
}

// WriteSnapshot writes the snapshot frame sent first when replay is not
// possible. Its id is the snapshot's seq, so a client that reconnects after
// it resumes from there.
func WriteSnapshot(w io.Writer, s *agentsv1.Snapshot) error {
	if s == nil {
		return errors.New("sse: nil snapshot")
	}
	return writeFrame(w, events.Position{Seq: s.GetSeq(), Delta: s.GetDeltaSeq()}.String(), SnapshotEvent, s)
}

// WriteLagged writes the frame that ends the stream of a subscriber that fell
// behind. Its id is the last seq delivered, which is where the client
// resumes.
func WriteLagged(w io.Writer, l *agentsv1.Lagged) error {
	if l == nil {
		return errors.New("sse: nil lagged")
	}
	return writeFrame(w, events.Position{Seq: l.GetLastSeq(), Delta: l.GetLastDeltaSeq()}.String(), LaggedEvent, l)
}

// WriteComment writes a comment frame, which clients ignore; the server
// sends ": ping" as a heartbeat. Each line of text becomes its own comment
// line, so text cannot end the frame early or inject fields.
func WriteComment(w io.Writer, text string) error {
	var b bytes.Buffer
	for _, line := range splitLines(text) {
		b.WriteByte(':')
		if line != "" {
			b.WriteByte(' ')
			b.WriteString(line)
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// writeFrame writes "id:", "event:" (when name is set) and a single "data:"
// line holding msg as compact JSON in the routes' representation.
func writeFrame(w io.Writer, id, name string, msg proto.Message) error {
	b, err := frameBytes(id, name, msg)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func frameBytes(id, name string, msg proto.Message) ([]byte, error) {
	if strings.ContainsAny(name, "\r\n") {
		return nil, fmt.Errorf("sse: event name %q contains a line break", name)
	}
	// The JSON routes' representation, compact: always one line.
	data, err := apijson.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("sse: encode %s: %w", name, err)
	}

	var b bytes.Buffer
	b.Grow(len(data) + len(id) + len(name) + 24)
	b.WriteString("id: ")
	b.WriteString(id)
	b.WriteByte('\n')
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	// JSON escapes line breaks inside strings, so data is one line.
	b.Write(data)
	b.WriteString("\n\n")
	return b.Bytes(), nil
}

// splitLines splits text at every SSE line ending: CRLF, CR or LF.
func splitLines(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	return strings.Split(text, "\n")
}

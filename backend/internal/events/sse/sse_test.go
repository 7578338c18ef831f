package sse

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func when() *timestamppb.Timestamp {
	return timestamppb.New(time.Date(2025, 3, 4, 5, 6, 7, 800_000_000, time.UTC))
}

func TestWriteEvent(t *testing.T) {
	tests := []struct {
		name string
		ev   *agentsv1.Event
		want string
	}{
		{
			name: "text with line breaks stays on one data line",
			ev: &agentsv1.Event{
				Seq: 7, SessionId: "s1", Owner: "alice", Time: when(), Kind: "text.delta",
				Body: &agentsv1.Event_TextDelta{TextDelta: &agentsv1.TextDelta{
					Text: "line one\nline \"two\"\r\n\ttab <&> é", TurnIndex: 3,
				}},
			},
			want: "id: 7\n" +
				"event: text.delta\n" +
				`data: {"seq":7,"session_id":"s1","owner":"alice","time":"2025-03-04T05:06:07.8Z","kind":"text.delta","delta_seq":0,"text":"line one\nline \"two\"\r\n\ttab <&> é","turn_index":3}` + "\n" +
				"\n",
		},
		{
			name: "server-wide event: every field written, the body beside the position",
			ev: &agentsv1.Event{
				Seq: 1, Time: when(), Kind: "agents.changed",
				Body: &agentsv1.Event_AgentsChanged{AgentsChanged: &agentsv1.AgentsChanged{Slugs: []string{"a", "b"}}},
			},
			want: "id: 1\n" +
				"event: agents.changed\n" +
				`data: {"seq":1,"session_id":"","owner":"","time":"2025-03-04T05:06:07.8Z","kind":"agents.changed","delta_seq":0,"slugs":["a","b"],"errors":[],"agent":"","version":0,"deleted":false}` + "\n" +
				"\n",
		},
		{
			name: "enums by their short names, 64-bit numbers as numbers",
			ev: &agentsv1.Event{
				Seq: 18446744073709551615, SessionId: "s", Owner: "o", Kind: "run.stopped",
				Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{
					Status: agentsv1.SessionStatus_SESSION_STATUS_READY, Reason: "done",
				}},
			},
			want: "id: 18446744073709551615\n" +
				"event: run.stopped\n" +
				`data: {"seq":18446744073709551615,"session_id":"s","owner":"o","time":null,"kind":"run.stopped","delta_seq":0,"status":"ready","reason":"done","steps":0,"text":"","budget":""}` + "\n" +
				"\n",
		},
		{
			name: "no kind, no event line",
			ev:   &agentsv1.Event{Seq: 2},
			want: "id: 2\n" +
				`data: {"seq":2,"session_id":"","owner":"","time":null,"kind":"","delta_seq":0}` + "\n" +
				"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w countingWriter
			if err := WriteEvent(&w, tt.ev); err != nil {
				t.Fatal(err)
			}
			if got := w.buf.String(); got != tt.want {
				t.Fatalf("frame:\n got %q\nwant %q", got, tt.want)
			}
			if w.writes != 1 {
				t.Fatalf("frame written in %d writes, want 1", w.writes)
			}
		})
	}
}

func TestWriteItems(t *testing.T) {
	tests := []struct {
		name  string
		write func(*bytes.Buffer) error
		want  string
	}{
		{
			name: "snapshot",
			write: func(b *bytes.Buffer) error {
				return WriteSnapshot(b, &agentsv1.Snapshot{Seq: 12, Sessions: []*agentsv1.SessionMeta{
					{Id: "s1", Agent: "helper", Title: "two\nlines", Status: agentsv1.SessionStatus_SESSION_STATUS_RUNNING},
				}})
			},
			want: "id: 12\n" +
				"event: snapshot\n" +
				`data: {"seq":12,"sessions":[{"id":"s1","agent":"helper","owner":"","title":"two\nlines","status":"running","status_reason":"","parent_id":"","forked_from":"","turn_count":0,"usage":null,"pending_mail":0,"pending_calls":0,"depth":0,"create_time":null,"update_time":null,"allowed_tools":[],"root_id":"","budget":null,"agent_version":0,"pinned_agent_version":0,"agent_generation":0}],"delta_seq":0}` + "\n" +
				"\n",
		},
		{
			name:  "empty snapshot",
			write: func(b *bytes.Buffer) error { return WriteSnapshot(b, &agentsv1.Snapshot{}) },
			want:  "id: 0\nevent: snapshot\n" + `data: {"seq":0,"sessions":[],"delta_seq":0}` + "\n\n",
		},
		{
			name:  "lagged",
			write: func(b *bytes.Buffer) error { return WriteLagged(b, &agentsv1.Lagged{LastSeq: 9}) },
			want:  "id: 9\nevent: lagged\n" + `data: {"last_seq":9,"last_delta_seq":0}` + "\n\n",
		},
		{
			name:  "ping",
			write: func(b *bytes.Buffer) error { return WriteComment(b, "ping") },
			want:  ": ping\n\n",
		},
		{
			name:  "empty comment",
			write: func(b *bytes.Buffer) error { return WriteComment(b, "") },
			want:  ":\n\n",
		},
		{
			name:  "comment lines split at every line ending",
			write: func(b *bytes.Buffer) error { return WriteComment(b, "a\nb\r\nc\rd\n\ndata: x") },
			want:  ": a\n: b\n: c\n: d\n:\n: data: x\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Fatalf("frame:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	bad := errors.New("connection reset")
	tests := []struct {
		name    string
		w       *countingWriter
		write   func(*countingWriter) error
		wantErr error // nil: any error
	}{
		{"kind with a line break", &countingWriter{}, func(w *countingWriter) error {
			return WriteEvent(w, &agentsv1.Event{Seq: 1, Kind: "text.delta\ndata: injected"})
		}, nil},
		{"invalid UTF-8", &countingWriter{}, func(w *countingWriter) error {
			return WriteEvent(w, &agentsv1.Event{Seq: 1, Kind: "text.delta", Body: &agentsv1.Event_TextDelta{
				TextDelta: &agentsv1.TextDelta{Text: "\xff"},
			}})
		}, nil},
		{"nil event", &countingWriter{}, func(w *countingWriter) error { return WriteEvent(w, nil) }, nil},
		{"nil snapshot", &countingWriter{}, func(w *countingWriter) error { return WriteSnapshot(w, nil) }, nil},
		{"nil lagged", &countingWriter{}, func(w *countingWriter) error { return WriteLagged(w, nil) }, nil},
		{"event write fails", &countingWriter{err: bad}, func(w *countingWriter) error {
			return WriteEvent(w, &agentsv1.Event{Seq: 1})
		}, bad},
		{"comment write fails", &countingWriter{err: bad}, func(w *countingWriter) error {
			return WriteComment(w, "ping")
		}, bad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.write(tt.w)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && tt.w.buf.Len() != 0 {
				t.Fatalf("wrote %q before failing", tt.w.buf.String())
			}
		})
	}
}

func TestParsePosition(t *testing.T) {
	good := map[string]events.Position{
		"0":                    {},
		"42":                   {Seq: 42},
		"007":                  {Seq: 7},
		"42.3":                 {Seq: 42, Delta: 3},
		"42.3.a":               {Seq: 42, Delta: 10<<33 | 3},
		"42.0.zz":              {Seq: 42, Delta: 1295 << 33},
		"18446744073709551615": {Seq: 18446744073709551615},
	}
	for in, want := range good {
		if got, err := events.ParsePosition(in); err != nil || got != want {
			t.Errorf("ParsePosition(%q) = %v, %v; want %v", in, got, err, want)
		}
		if in != "007" {
			if got := want.String(); got != in {
				t.Errorf("%v.String() = %q, want %q", want, got, in)
			}
		}
	}
	for _, in := range []string{"", "-1", "+1", " 1", "1 ", "0x10", "1_000", "1.", ".5", "1.-2", "abc", "18446744073709551616", "1.2.", "1.2.0", "1.2.3.4", "1.2.-3", "1.2.3 "} {
		_, err := events.ParsePosition(in)
		if err == nil {
			t.Errorf("ParsePosition(%q) succeeded", in)
			continue
		}
		if !strings.Contains(err.Error(), "seq, seq.delta or seq.delta.tag") {
			t.Errorf("ParsePosition(%q) error %q does not say what is expected", in, err)
		}
	}
}

func TestParseAfter(t *testing.T) {
	tests := []struct {
		header, query string
		want          *events.Position
		wantErr       bool
	}{
		{"", "", nil, false},
		{"5", "", &events.Position{Seq: 5}, false},
		{"", "7", &events.Position{Seq: 7}, false},
		{"5", "7", &events.Position{Seq: 5}, false},
		{"5.2", "7", &events.Position{Seq: 5, Delta: 2}, false},
		{"0", "7", &events.Position{}, false},
		{"x", "7", nil, true},
		{"", "x", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseAfter(tt.header, tt.query)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseAfter(%q, %q) error %v, wantErr %v", tt.header, tt.query, err, tt.wantErr)
			continue
		}
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("ParseAfter(%q, %q) = %v, want %v", tt.header, tt.query, got, tt.want)
		}
	}
}

// countingWriter records what was written and in how many calls, or fails
// every write with err.
type countingWriter struct {
	buf    bytes.Buffer
	writes int
	err    error
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.writes++
	return w.buf.Write(p)
}

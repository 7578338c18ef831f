package llm

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestSSEReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stream string
		want   []string
	}{
		{
			name:   "plain events",
			stream: "data: {\"a\":1}\n\ndata: [DONE]\n\n",
			want:   []string{`{"a":1}`, "[DONE]"},
		},
		{
			name:   "CRLF lines, comments, event names and ids",
			stream: ": keep-alive\r\n\r\nevent: message\r\nid: 7\r\ndata: one\r\n\r\nretry: 100\r\ndata:two\r\n\r\n",
			want:   []string{"one", "two"},
		},
		{
			name:   "data split over several lines",
			stream: "data: {\"a\":\ndata: 1}\n\n",
			want:   []string{"{\"a\":\n1}"},
		},
		{
			name:   "last event without its blank line",
			stream: "data: one\n\ndata: two",
			want:   []string{"one", "two"},
		},
		{
			name:   "blank lines only",
			stream: "\n\n\n",
			want:   nil,
		},
		{
			name:   "a line longer than the read buffer",
			stream: "data: " + strings.Repeat("x", 200_000) + "\n\n",
			want:   []string{strings.Repeat("x", 200_000)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newSSEReader(strings.NewReader(tt.stream), 1<<20)
			var got []string
			for {
				data, err := r.next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("next: %v", err)
				}
				got = append(got, string(data))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestSSEReaderPassesReadErrors(t *testing.T) {
	t.Parallel()
	broken := io.MultiReader(strings.NewReader("data: one\n\ndata: tw"), errReader{io.ErrUnexpectedEOF})
	r := newSSEReader(broken, 1<<20)
	if data, err := r.next(); err != nil || string(data) != "one" {
		t.Fatalf("first event: %q, %v", data, err)
	}
	if _, err := r.next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("error %v, want the body's io.ErrUnexpectedEOF", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestSSEReaderBoundsEvents(t *testing.T) {
	t.Parallel()
	const limit = 10
	tests := []struct {
		name   string
		stream string
		want   []string // events read before the error
	}{
		{"data over the limit", "data: 12345678901\n\n", nil},
		{"data lines that add up past the limit", "data: 12345\ndata: 12345\n\n", nil},
		{"a comment line over the limit", ": " + strings.Repeat("x", 100) + "\n\ndata: ok\n\n", nil},
		{"an endless line", "data: ok\n\ndata: " + strings.Repeat("x", 100_000), []string{"ok"}},
		{"at the limit", "data: 1234567890\n\ndata: 12345\ndata: 1234\n\ndata: " + strings.Repeat("x", 11), []string{"1234567890", "12345\n1234"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newSSEReader(strings.NewReader(tt.stream), limit)
			var got []string
			for {
				data, err := r.next()
				if errors.Is(err, errEventTooLarge) {
					break
				}
				if err != nil {
					t.Fatalf("next: %v after %q; want errEventTooLarge", err, got)
				}
				got = append(got, string(data))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q before the error, want %q", got, tt.want)
			}
		})
	}
}

package logwriter_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/agents-os/agents/backend/internal/eventually"
	"github.com/agents-os/agents/backend/internal/logwriter"
)

// sink is an out that counts its writes.
type sink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.buf.Write(p)
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func TestLinesKeepTheirOrderAndShareWrites(t *testing.T) {
	out := &sink{}
	w := logwriter.New(out)
	d := w.Deferred()
	_, _ = d.Write([]byte("request 1\n"))
	_, _ = d.Write([]byte("request 2\n"))
	_, _ = w.Write([]byte("started\n"))
	_, _ = d.Write([]byte("request 3\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, _ = d.Write([]byte("after close\n"))
	want := "request 1\nrequest 2\nstarted\nrequest 3\nafter close\n"
	if got := out.String(); got != want {
		t.Fatalf("out:\n%s\nwant:\n%s", got, want)
	}
	if out.writes != 3 {
		t.Fatalf("%d writes, want 3: the held lines with the line at once, the rest at Close, the line after Close", out.writes)
	}
}

func TestDeferredLinesGoOutByThemselves(t *testing.T) {
	out := &sink{}
	w := logwriter.New(out)
	defer w.Close()
	_, _ = w.Deferred().Write([]byte("request\n"))
	eventually.That(t, "the deferred line is written without a Flush", func() bool {
		return out.String() == "request\n"
	})
}

func TestAFullBufferIsWritten(t *testing.T) {
	out := &sink{}
	w := logwriter.New(out)
	defer w.Close()
	line := strings.Repeat("x", 99) + "\n"
	for range 3 * logwriter.BufferSize / len(line) {
		_, _ = w.Deferred().Write([]byte(line))
	}
	// At most a buffer's worth is held, whenever the timer fired.
	if got := len(out.String()); got < 2*logwriter.BufferSize-len(line) {
		t.Fatalf("%d bytes written of %d, want all but a buffer's worth", got, 3*logwriter.BufferSize)
	}
}

// Package logwriter lets a busy server's routine log lines share write
// calls: one line per request written on its own was a system call per
// request, a fortieth of the CPU a prompt cost.
//
// A Writer has two faces. Write sends a line out at once, with every
// line held before it; Deferred returns the face whose lines may wait a
// little: until FlushAfter has passed since the first of them, until
// BufferSize bytes are held, until a line goes out at once, or until
// Flush or Close. The lines keep the order they were written in, and a
// clean stop (Close) loses none.
package logwriter

import (
	"io"
	"sync"
	"time"
)

// FlushAfter is the longest a deferred line waits.
const FlushAfter = 50 * time.Millisecond

// BufferSize is how many bytes of deferred lines are held at most
// before they are written.
const BufferSize = 32 << 10

// Writer buffers deferred lines in front of out.
type Writer struct {
	mu     sync.Mutex
	out    io.Writer
	buf    []byte
	timer  *time.Timer
	armed  bool
	closed bool
}

// New returns a Writer in front of out.
func New(out io.Writer) *Writer {
	w := &Writer{out: out}
	w.timer = time.AfterFunc(time.Hour, func() { _ = w.Flush() })
	w.timer.Stop()
	return w
}

// Write writes the lines held and then p, in one call to out.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return w.out.Write(p)
	}
	w.buf = append(w.buf, p...)
	if err := w.flushLocked(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Deferred returns the face of w whose lines may wait (see the package
// doc). Each call to its Write must hold whole lines, as a slog
// handler's does.
func (w *Writer) Deferred() io.Writer { return deferred{w} }

type deferred struct{ w *Writer }

func (d deferred) Write(p []byte) (int, error) {
	w := d.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.out.Write(p)
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) >= BufferSize {
		if err := w.flushLocked(); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if !w.armed {
		w.armed = true
		w.timer.Reset(FlushAfter)
	}
	return len(p), nil
}

// Flush writes the lines held.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

// Close writes the lines held; lines written after it go out at once.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.timer.Stop()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if w.armed {
		w.armed = false
		w.timer.Stop()
	}
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.out.Write(w.buf)
	if cap(w.buf) > 4*BufferSize {
		// A burst of long lines: give the memory back.
		w.buf = nil
	} else {
		w.buf = w.buf[:0]
	}
	return err
}

// Package modelfault wraps the runner's models with switches that make a
// call fail, hang, stream slowly or stop half-way until a test lets it go
// on, and records every request, so tests exercise the kernel against a
// model that misbehaves the way real providers do.
package modelfault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/runner"
)

// ErrFailed is the error of a call a switch failed.
var ErrFailed = errors.New("modelfault: the model call failed")

// Always, as a count, keeps a switch on until Clear.
const Always = -1

// Faults are the switches of the models a Factory makes. The zero value
// changes nothing; it is safe for concurrent use.
type Faults struct {
	mu       sync.Mutex
	failLeft int
	failErr  error
	hangLeft int
	slow     time.Duration
	hold     *Hold
	requests []llm.Request
	changed  chan struct{}
}

// Factory wraps the models of inner with f's switches.
func (f *Faults) Factory(inner runner.ModelFactory) runner.ModelFactory {
	return func(m catalog.Model) (runner.Model, error) {
		model, err := inner(m)
		if err != nil {
			return nil, err
		}
		return &faulty{inner: model, f: f}, nil
	}
}

// Fail makes the next n calls fail with err (ErrFailed when nil) before
// they reach the model; Always fails them until Clear.
func (f *Faults) Fail(n int, err error) {
	if err == nil {
		err = ErrFailed
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failLeft, f.failErr = n, err
}

// Hang makes the next n calls wait, without an answer, until they are
// cancelled; Always hangs them until Clear.
func (f *Faults) Hang(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hangLeft = n
}

// Slow makes every call wait d before each delta it streams; zero ends it.
func (f *Faults) Slow(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slow = d
}

// HoldAfter makes the next call stop after it streamed n deltas, until
// the returned Hold is released (or the call is cancelled).
func (f *Faults) HoldAfter(n int) *Hold {
	h := &Hold{after: n, held: make(chan struct{}), release: make(chan struct{})}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = h
	return h
}

// Clear turns every switch off. Calls hanging or held go on waiting for
// their cancel or release.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failLeft, f.hangLeft, f.slow, f.hold = 0, 0, 0, nil
}

// Requests returns every request made so far, in order, those failed or
// hung by a switch included.
func (f *Faults) Requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// WaitRequests waits until at least n requests were made and returns
// them all, or returns ctx's error.
func (f *Faults) WaitRequests(ctx context.Context, n int) ([]llm.Request, error) {
	for {
		f.mu.Lock()
		if len(f.requests) >= n {
			out := slices.Clone(f.requests)
			f.mu.Unlock()
			return out, nil
		}
		if f.changed == nil {
			f.changed = make(chan struct{})
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%d model requests, want %d: %w", len(f.Requests()), n, ctx.Err())
		case <-ch:
		}
	}
}

// Hold is a call stopped half-way (see HoldAfter).
type Hold struct {
	after   int
	held    chan struct{}
	release chan struct{}
	once    sync.Once
}

// Held is closed once the call stopped.
func (h *Hold) Held() <-chan struct{} { return h.held }

// Release lets the call go on. It is idempotent.
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

// plan is what one call does, decided when it starts.
type plan struct {
	err  error
	hang bool
	slow time.Duration
	hold *Hold
}

func (f *Faults) begin(req llm.Request) plan {
	f.mu.Lock()
	defer f.mu.Unlock()
	req.Messages = slices.Clone(req.Messages)
	f.requests = append(f.requests, req)
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
	p := plan{slow: f.slow}
	switch {
	case f.failLeft != 0:
		p.err = f.failErr
		if f.failLeft > 0 {
			f.failLeft--
		}
	case f.hangLeft != 0:
		p.hang = true
		if f.hangLeft > 0 {
			f.hangLeft--
		}
	case f.hold != nil:
		p.hold, f.hold = f.hold, nil
	}
	return p
}

type faulty struct {
	inner runner.Model
	f     *Faults
}

func (m *faulty) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	p := m.f.begin(req)
	switch {
	case p.err != nil:
		return llm.Response{}, p.err
	case p.hang:
		<-ctx.Done()
		return llm.Response{}, ctx.Err()
	}
	streamed := 0
	return m.inner.Stream(ctx, req, func(d llm.Delta) {
		if p.slow > 0 {
			t := time.NewTimer(p.slow)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
		onDelta(d)
		if streamed++; p.hold != nil && streamed == p.hold.after {
			close(p.hold.held)
			select {
			case <-p.hold.release:
			case <-ctx.Done():
			}
		}
	})
}

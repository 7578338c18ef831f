package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
)

// progressEvery is the least time between two tool.progressed events of
// one call: a tool that writes a line per millisecond must not write an
// event per millisecond to the log. Lines in between are coalesced: the
// newest wins.
const progressEvery = 250 * time.Millisecond

// progressReporter turns a call's progress lines into rate-limited
// tool.progressed events. report never blocks (a tool's stderr waits on
// it); a goroutine of the reporter writes the events.
type progressReporter struct {
	r      *Runner
	env    callEnv
	callID string

	mu      sync.Mutex
	pending string
	has     bool
	wake    chan struct{}
	done    chan struct{}
	stopped chan struct{}
}

func (r *Runner) newProgress(env callEnv, callID string) *progressReporter {
	p := &progressReporter{r: r, env: env, callID: callID,
		wake: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	if !r.goroutines.Go(p.loop) {
		// The runner closes: nothing is announced any more, and stop
		// has no loop to wait for.
		close(p.stopped)
	}
	return p
}

// report takes a line of progress.
func (p *progressReporter) report(line string) {
	if line == "" {
		return
	}
	p.mu.Lock()
	p.pending, p.has = line, true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// stop writes what is pending and ends the reporter.
func (p *progressReporter) stop() {
	close(p.done)
	<-p.stopped
}

func (p *progressReporter) loop() {
	defer close(p.stopped)
	for {
		select {
		case <-p.wake:
		case <-p.done:
			p.flush()
			return
		}
		p.flush()
		select {
		case <-time.After(progressEvery):
		case <-p.done:
			p.flush()
			return
		}
	}
}

func (p *progressReporter) flush() {
	p.mu.Lock()
	line, has := p.pending, p.has
	p.has = false
	p.mu.Unlock()
	if !has {
		return
	}
	ev := events.WithKind(&agentsv1.Event{SessionId: p.env.sessionID, Owner: p.env.owner,
		Body: &agentsv1.Event_ToolProgressed{ToolProgressed: &agentsv1.ToolProgressed{CallId: p.callID, Message: line}}})
	if err := p.r.announce(p.r.ctx, ev); err != nil && p.r.ctx.Err() == nil {
		p.r.log.Warn("announce tool progress", "session", p.env.sessionID, "call", p.callID, "err", err)
	}
}

// followChild reports a helper's child session as the progress of the
// parent's call: its tools starting and reporting, until ctx ends.
func (r *Runner) followChild(ctx context.Context, childID string, report func(string)) {
	sub, _ := r.hub.Subscribe(events.SessionScope(childID), nil)
	follow := func() {
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.C():
				if !ok {
					return
				}
				switch b := ev.GetBody().(type) {
				case *agentsv1.Event_ToolStarted:
					report(fmt.Sprintf("%s: calling %s", childID, b.ToolStarted.GetCall().GetName()))
				case *agentsv1.Event_ToolProgressed:
					report(fmt.Sprintf("%s: %s", childID, b.ToolProgressed.GetMessage()))
				case *agentsv1.Event_RunStarted:
					report(fmt.Sprintf("%s: running", childID))
				}
			}
		}
	}
	if !r.goroutines.Go(follow) {
		sub.Close() // the runner closes
	}
}

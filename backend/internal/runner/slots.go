package runner

import (
	"sync"

	"github.com/agents-os/agents/backend/internal/errs"
)

// slots are the run limits, counted in memory where runs open: every run
// takes a slot, whoever starts it (a client, a helper call, mail, a watch,
// recovery), and gives it back when it ends. Checking and taking are one
// step, so a burst cannot overshoot.
type slots struct {
	max, perOwner int

	mu      sync.Mutex
	total   int
	byOwner map[string]int
	// queued are sessions whose mail could not start a run for want of a
	// slot; each slot given back wakes the oldest, through wake. It is
	// the runner's memory of the store's pending mail (see memory.go): an
	// eviction keeps it, and after a restart Recover queues again the
	// sessions whose mail finds no free run.
	queued []string
	// wake starts the wake of a session; called under mu, it must not
	// block.
	wake func(id string)
}

// queue remembers a session to wake when a slot is free.
func (s *slots) queue(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.queued {
		if q == id {
			return
		}
	}
	s.queued = append(s.queued, id)
}

func (s *slots) check(owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refuse(owner)
}

func (s *slots) refuse(owner string) error {
	if s.max > 0 && s.total >= s.max {
		return errs.ResourceExhausted(errs.CodeTooManyRuns, "the server runs %d sessions at once, its limit; try again when one ends", s.max)
	}
	if s.perOwner > 0 && s.byOwner[owner] >= s.perOwner {
		return errs.ResourceExhausted(errs.CodeTooManyRuns, "%d runs are active for this owner, the limit; try again when one ends", s.perOwner)
	}
	return nil
}

// take counts a run that opens, or refuses it.
func (s *slots) take(owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refuse(owner); err != nil {
		return err
	}
	if s.byOwner == nil {
		s.byOwner = map[string]int{}
	}
	s.total++
	s.byOwner[owner]++
	return nil
}

// give counts a run that ended.
func (s *slots) give(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.byOwner[owner]--; s.byOwner[owner] <= 0 {
		delete(s.byOwner, owner)
	}
	s.wakeNext()
}

// pass wakes the next queued session: the one woken before had no use
// for the free run (it is gone, or its mail was folded meanwhile).
func (s *slots) pass() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wakeNext()
}

func (s *slots) wakeNext() {
	if len(s.queued) > 0 && s.wake != nil {
		id := s.queued[0]
		s.queued = s.queued[1:]
		s.wake(id)
	}
}

// active returns the runs counted.
func (s *slots) active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

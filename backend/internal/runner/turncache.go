package runner

import (
	"sync"
	"sync/atomic"
)

// A stored turn never changes, so its wire encoding does not either: a
// loaded session keeps the encodings its views were answered with, and
// a client that asks again (a waiting GetSession after each prompt)
// costs the new turns' encoding only. The cache belongs to the actor and
// goes with it at eviction; every cache counts its bytes against one
// budget for the runner (Options.TurnCacheBudget). A turn that does not
// fit is encoded each time, as without the cache.

// DefaultTurnCacheBudget bounds the bytes every loaded session's turn
// encodings hold together.
const DefaultTurnCacheBudget = 8 << 20

// TurnCache holds encodings of one loaded session's turns by turn index.
// Its methods may be called from any goroutine; the zero of *TurnCache
// (nil) keeps nothing.
type TurnCache struct {
	budget *turnBudget

	mu    sync.Mutex
	turns [][]byte
	size  int64
	// dropped is set at eviction: an encoding made later is not kept.
	dropped bool
}

// turnBudget is the runner's bytes of turn encodings.
type turnBudget struct {
	max  int64
	used atomic.Int64
}

// Get returns turn i's encoding, nil when none is kept.
func (c *TurnCache) Get(i int) []byte {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < 0 || i >= len(c.turns) {
		return nil
	}
	return c.turns[i]
}

// Put keeps b as turn i's encoding when the budget has room. b must not
// change afterwards.
func (c *TurnCache) Put(i int, b []byte) {
	if c == nil || i < 0 {
		return
	}
	n := int64(len(b))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped || (i < len(c.turns) && c.turns[i] != nil) {
		return
	}
	if c.budget.used.Add(n) > c.budget.max {
		c.budget.used.Add(-n)
		return
	}
	for len(c.turns) <= i {
		c.turns = append(c.turns, nil)
	}
	c.turns[i] = b
	c.size += n
}

// drop lets every encoding go and gives its bytes back to the budget.
func (c *TurnCache) drop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget.used.Add(-c.size)
	c.turns, c.size, c.dropped = nil, 0, true
}

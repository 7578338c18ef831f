package runner

import "sync"

// sessionParams keeps each session's params for as long as the session
// lives in this process, evictions included: params are secrets a client
// supplies, never stored, so an idle session must not lose them. A session
// deleted takes its params with it; a restart loses them all, and runs
// that need them wait for a client to supply them again.
type sessionParams struct {
	mu   sync.Mutex
	byID map[string]map[string]string
}

// of returns a session's params, nil when it has none: a session no
// client gave params costs no entry. Only the session's actor reads or
// writes the map it gets, and only merge changes it.
func (p *sessionParams) of(id string) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byID[id]
}

// merge adds values to a session's params and returns them.
func (p *sessionParams) merge(id string, values map[string]string) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID == nil {
		p.byID = map[string]map[string]string{}
	}
	m, ok := p.byID[id]
	if !ok {
		m = map[string]string{}
		p.byID[id] = m
	}
	for k, v := range values {
		m[k] = v
	}
	return m
}

// forget drops a deleted session's params.
func (p *sessionParams) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.byID, id)
}

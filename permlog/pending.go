package permlog

import "sync"

// MaxPending bounds the records a Pending holds between two Takes; later
// ones are only counted.
const MaxPending = 1024

// Pending collects a session's records between two model replies: the
// session writes them into the trace entry of the reply whose tool calls
// they judged (the session file's ama.trace step, get_trace). It is safe
// for concurrent use.
type Pending struct {
	mu      sync.Mutex
	recs    []*Record
	dropped int
}

// Add keeps r (it must not change afterwards).
func (p *Pending) Add(r *Record) {
	p.mu.Lock()
	if len(p.recs) < MaxPending {
		p.recs = append(p.recs, r)
	} else {
		p.dropped++
	}
	p.mu.Unlock()
}

// Take returns the records kept since the last Take and how many were
// dropped beyond MaxPending, and empties p.
func (p *Pending) Take() ([]*Record, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	recs, dropped := p.recs, p.dropped
	p.recs, p.dropped = nil, 0
	return recs, dropped
}

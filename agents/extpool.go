package agents

import (
	"context"
	"sync"
)

// External agent concurrency (agents.md §1, §8.2): at most
// DefaultExternalMax external agent processes run at once in the process
// (agents.maxConcurrent), and at most the agent's own limit of one id
// (agents.<id>.maxConcurrent; claude: DefaultClaudeMax). A run beyond a
// limit waits for a slot (it is not refused); aborting it while it waits
// ends it as aborted. External runs do not take a slot of the sub-agent
// pool (subagents.maxConcurrent bounds ama children), but they count
// against subagents.maxPending like every task run.
const (
	DefaultExternalMax = 3
	DefaultClaudeMax   = 2
)

// extPool counts the running external agent processes. One pool serves
// every registry of a process (it is created once by Factory), since the
// limits bound CLI processes on the machine, not per session. It is safe
// for concurrent use.
type extPool struct {
	mu    sync.Mutex
	total int
	byID  map[string]int
	wake  chan struct{} // closed (and replaced) whenever a slot is freed
}

func newExtPool() *extPool {
	return &extPool{byID: map[string]int{}, wake: make(chan struct{})}
}

// acquire takes a slot for agent id, waiting while max processes run in
// total or maxID of id (<= 0: no limit of its own). waiting is called once
// when the run has to wait (nil: not told). It returns the release
// function, or ctx's error when ctx ended first.
func (p *extPool) acquire(ctx context.Context, id string, max, maxID int, waiting func()) (func(), error) {
	told := false
	for {
		p.mu.Lock()
		if p.total < max && (maxID <= 0 || p.byID[id] < maxID) {
			p.total++
			p.byID[id]++
			p.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { p.release(id) }) }, nil
		}
		wake := p.wake
		p.mu.Unlock()
		if !told && waiting != nil {
			told = true
			waiting()
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (p *extPool) release(id string) {
	p.mu.Lock()
	p.total--
	if p.byID[id]--; p.byID[id] <= 0 {
		delete(p.byID, id)
	}
	close(p.wake)
	p.wake = make(chan struct{})
	p.mu.Unlock()
}

// externalLimits are the limits of agent id: the process total and the
// agent's own (0: none).
func (c Config) externalLimits(id string) (int, int) {
	max := c.ExternalMaxConcurrent
	if max <= 0 {
		max = DefaultExternalMax
	}
	own := c.External[id].MaxConcurrent
	if own <= 0 && id == AgentClaude {
		own = DefaultClaudeMax
	}
	return max, own
}

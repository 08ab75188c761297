package permlog

import (
	"crypto/sha256"
	"sync"
	"time"
)

// Counters tally a session's decisions: allowed, asked (a person was
// asked) and denied, by deciding layer/step and by classifier stage.
type Counters struct {
	mu sync.Mutex
	c  Counts
}

// Counts is a snapshot of Counters (the get_session_stats "permissions"
// member).
type Counts struct {
	Allowed int `json:"allowed"`
	Asked   int `json:"asked"`
	Denied  int `json:"denied"`
	// ByLayer counts final effects by the layer (and approvals step) that
	// decided: "rule/allow-rule": {"allow": 3}.
	ByLayer map[string]map[string]int `json:"byLayer,omitempty"`
	// ByStage counts classifier decisions by stage: "fast": {"allow": 2}.
	ByStage map[string]map[string]int `json:"byStage,omitempty"`
	// Shadow counts the records whose shadow verdict differed.
	ShadowDiffers int `json:"shadowDiffers,omitempty"`
}

// Add counts one record.
func (c *Counters) Add(r *Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r.Effect {
	case "allow":
		c.c.Allowed++
	default:
		c.c.Denied++
	}
	var decider *Vote
	for i := range r.Votes {
		v := &r.Votes[i]
		switch v.Layer {
		case "person":
			c.c.Asked++
		case "classifier":
			if v.Stage != "" {
				c.c.ByStage = bump(c.c.ByStage, v.Stage, v.Vote)
			}
		}
		decider = v
	}
	if decider != nil {
		key := decider.Layer
		if decider.Step != "" {
			key += "/" + decider.Step
		}
		c.c.ByLayer = bump(c.c.ByLayer, key, r.Effect)
	}
	if r.Shadow != nil && r.Shadow.Differs {
		c.c.ShadowDiffers++
	}
}

func bump(m map[string]map[string]int, k, v string) map[string]map[string]int {
	if m == nil {
		m = map[string]map[string]int{}
	}
	if m[k] == nil {
		m[k] = map[string]int{}
	}
	m[k][v]++
	return m
}

// Snapshot copies the counts.
func (c *Counters) Snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.c
	out.ByLayer = clone(c.c.ByLayer)
	out.ByStage = clone(c.c.ByStage)
	return out
}

func clone(m map[string]map[string]int) map[string]map[string]int {
	if m == nil {
		return nil
	}
	out := make(map[string]map[string]int, len(m))
	for k, in := range m {
		cp := make(map[string]int, len(in))
		for a, b := range in {
			cp[a] = b
		}
		out[k] = cp
	}
	return out
}

// MaxRejectionKeys bounds the actions Rejections remembers (seed 004).
const MaxRejectionKeys = 1024

// Rejections counts rejections of equivalent actions. The key is hashed
// (the action's text never stays in memory here, and the hash is never
// returned or logged); at most MaxRejectionKeys counts are kept, the
// oldest key is forgotten first.
type Rejections struct {
	mu    sync.Mutex
	n     map[[32]byte]int
	order [][32]byte // insertion order, for eviction
}

// Reject counts one rejection of the action key and returns its count.
func (r *Rejections) Reject(key string) int {
	h := sha256.Sum256([]byte(key))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[[32]byte]int{}
	}
	if _, ok := r.n[h]; !ok {
		if len(r.order) >= MaxRejectionKeys {
			delete(r.n, r.order[0])
			r.order = r.order[1:]
		}
		r.order = append(r.order, h)
	}
	r.n[h]++
	return r.n[h]
}

// Count is the rejections of key so far.
func (r *Rejections) Count(key string) int {
	h := sha256.Sum256([]byte(key))
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[h]
}

// Len is how many actions are counted.
func (r *Rejections) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.n)
}

// Denial is the metadata of one recent denial (diagnostics): no reason
// text, no arguments.
type Denial struct {
	Time       string `json:"time"`
	Tool       string `json:"tool"`
	Code       string `json:"code"`
	Layer      string `json:"layer,omitempty"`
	Rejections int    `json:"rejections,omitempty"`
}

// MaxRecent is how many denials Recent keeps.
const MaxRecent = 32

// Recent keeps the last MaxRecent denials.
type Recent struct {
	mu   sync.Mutex
	list []Denial
}

// Add records a denial of r (allows are ignored).
func (d *Recent) Add(r *Record) {
	if r.Effect == "allow" {
		return
	}
	layer := ""
	if n := len(r.Votes); n > 0 {
		layer = r.Votes[n-1].Layer
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.list) >= MaxRecent {
		d.list = append(d.list[:0], d.list[1:]...)
	}
	d.list = append(d.list, Denial{Time: r.Time, Tool: r.Shape.Tool, Code: r.Code, Layer: layer, Rejections: r.Rejections})
}

// List copies the recent denials, oldest first.
func (d *Recent) List() []Denial {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Denial{}, d.list...)
}

// Stamp formats t as the records' time (UTC, milliseconds).
func Stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

package classifier

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
)

// DefaultCacheSize is the number of verdicts a Classifier remembers.
const DefaultCacheSize = 512

// key identifies a call for the cache and for sharing in-flight requests.
type key [sha256.Size]byte

// cacheKey identifies the exact call: SHA-256 over the classifier mode,
// the tool name, CanonicalInput (the full input, nothing normalised that
// can change meaning), the cwd, the project root and the sandbox note, each
// length-prefixed so that no two different calls share a key.
func cacheKey(mode Mode, in Input) key {
	h := sha256.New()
	for _, part := range [...]string{string(mode), in.Tool, CanonicalInput(in.Tool, in.Args), in.Cwd, in.ProjectRoot, in.SandboxNote} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	var k key
	h.Sum(k[:0])
	return k
}

// lru is a bounded map of successful verdicts; the least recently used entry
// is evicted first. It is not safe for concurrent use (Classifier.mu
// guards it).
type lru struct {
	max   int
	order *list.List // front = most recently used; values are *lruEntry
	items map[key]*list.Element
}

type lruEntry struct {
	k key
	v Verdict
}

func newLRU(max int) *lru {
	if max <= 0 {
		max = DefaultCacheSize
	}
	return &lru{max: max, order: list.New(), items: map[key]*list.Element{}}
}

func (c *lru) get(k key) (Verdict, bool) {
	e, ok := c.items[k]
	if !ok {
		return Verdict{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).v, true
}

func (c *lru) put(k key, v Verdict) {
	if e, ok := c.items[k]; ok {
		e.Value.(*lruEntry).v = v
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&lruEntry{k, v})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry).k)
	}
}

package classifier

import (
	"container/list"
	"crypto/sha256"
	"encoding/json"
)

// DefaultCacheSize is the number of verdicts a Classifier remembers.
const DefaultCacheSize = 512

// key identifies a call for the cache and for sharing in-flight requests.
type key [sha256.Size]byte

// cacheKey is SHA-256 of the tool name, a NUL byte and CanonicalInput.
func cacheKey(tool string, args json.RawMessage) key {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write([]byte(CanonicalInput(tool, args)))
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

package store

import (
	"hash/maphash"
	"math/bits"
	"slices"
)

// idIndex maps entry ids to their index in a tree's entries; for a
// repeated id the last put wins. It stands in for map[string]int32, which
// was the largest single cost of indexing a long session (one insert per
// entry on every resume, each probing a 24-byte slot with its key): here a
// slot is 8 bytes, a 32-bit hash tag and the index, in one flat array, and
// the keys are the entries' own ids, read only when a tag matches. Open
// addressing with linear probing, at most half full; nothing is ever
// removed. Not safe for concurrent use (it belongs to its Tree).
type idIndex struct {
	slots []uint64 // tag<<32 | index+1; 0 = empty
	n     int      // distinct ids
	seed  maphash.Seed
}

func newIDIndex(capacity int) idIndex {
	return idIndex{slots: make([]uint64, slotsFor(capacity)), seed: maphash.MakeSeed()}
}

// slotsFor returns a power of two of at least 2*n slots (16 at least).
func slotsFor(n int) int {
	return 1 << max(4, bits.Len(uint(2*n)))
}

// clone returns a copy of x (the same seed and slots) for a tree over
// the same entries at the same indexes (Tree.cloneChain).
func (x *idIndex) clone() idIndex {
	return idIndex{slots: slices.Clone(x.slots), n: x.n, seed: x.seed}
}

// get returns the index of id in entries.
func (x *idIndex) get(entries []*Entry, id string) (int32, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	h := maphash.String(x.seed, id)
	tag, mask := uint32(h>>32), uint64(len(x.slots)-1)
	for j := h & mask; ; j = (j + 1) & mask {
		s := x.slots[j]
		if s == 0 {
			return 0, false
		}
		if uint32(s>>32) == tag && entries[uint32(s)-1].ID == id {
			return int32(uint32(s) - 1), true
		}
	}
}

// put records that id (entries[i].ID) is at index i.
func (x *idIndex) put(entries []*Entry, id string, i int32) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow(entries)
	}
	h := maphash.String(x.seed, id)
	tag, mask := uint32(h>>32), uint64(len(x.slots)-1)
	v := uint64(tag)<<32 | uint64(uint32(i)+1)
	for j := h & mask; ; j = (j + 1) & mask {
		s := x.slots[j]
		if s == 0 {
			x.slots[j] = v
			x.n++
			return
		}
		if uint32(s>>32) == tag && entries[uint32(s)-1].ID == id {
			x.slots[j] = v
			return
		}
	}
}

// grow doubles the table, rehashing each id from its entry.
func (x *idIndex) grow(entries []*Entry) {
	old := x.slots
	if x.seed == (maphash.Seed{}) {
		x.seed = maphash.MakeSeed()
	}
	x.slots = make([]uint64, slotsFor(max(x.n+1, len(old))))
	mask := uint64(len(x.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		h := maphash.String(x.seed, entries[uint32(s)-1].ID)
		j := h & mask
		for x.slots[j] != 0 {
			j = (j + 1) & mask
		}
		x.slots[j] = s
	}
}

package store

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/internal/jsonstr"
)

// Tree indexes the entries of a session (in memory, no I/O): parent links,
// children in file order, labels, the session name and the active leaf.
// Entries form a forest: an entry whose parentId is null, unknown or its own
// id is a root. Ids are expected to be unique; if they are not, lookups by
// id find the last entry with that id.
//
// Every operation is O(1) amortised or linear in its result (Path, Branch,
// Children, Since), except Nodes which is O(n). A Tree is not safe for
// concurrent use; it belongs to the session's owner goroutine.
type Tree struct {
	entries []*Entry
	pos     idIndex // id → index in entries
	parent  []int32 // index of the parent, -1 for a root
	kids    kidList // children in file order
	roots   []int32
	orphans map[string][]int32 // missing parent id → roots waiting for it
	leaf    *string
	labels  map[string]string
	// labelAt holds the labels by their target's index, resolved when
	// each label entry was noted (its target is then usually the entry
	// just before, hot in the cache): NodesJSON copies it instead of
	// looking every label's target up again. lateLabel: a label named an
	// id not (yet) in the tree, so labelAt is not the whole story.
	labelAt   map[int32]string
	lateLabel bool
	name      string
}

// kidList holds the children of entries, in file order, in 4 bytes an
// entry for the usual one child (a long session is a chain): one[i] is
// i's only child (>= 0), -1 for none, or -2-k when i has more, many[k].
// A [][]int32 of one slice per entry cost 24 bytes an entry more, fresh
// memory the kernel faults in page by page on every resume and fork.
type kidList struct {
	one  []int32
	many [][]int32
}

func newKidList(n int) kidList {
	k := kidList{one: make([]int32, n)}
	for i := range k.one {
		k.one[i] = -1
	}
	return k
}

// of returns the children of i (shared: not to be modified).
func (k *kidList) of(i int32) []int32 {
	switch c := k.one[i]; {
	case c >= 0:
		return k.one[i : i+1 : i+1]
	case c == -1:
		return nil
	default:
		return k.many[-2-c]
	}
}

// add appends c to the children of q.
func (k *kidList) add(q, c int32) {
	switch old := k.one[q]; {
	case old == -1:
		k.one[q] = c
	case old >= 0:
		k.many = append(k.many, []int32{old, c})
		k.one[q] = int32(-1 - len(k.many))
	default:
		m := &k.many[-2-old]
		*m = append(*m, c)
	}
}

// clone returns a copy of the children of the first n entries.
func (k *kidList) clone(n int) kidList {
	c := kidList{one: slices.Clone(k.one[:n]), many: make([][]int32, len(k.many))}
	for i, m := range k.many {
		c.many[i] = slices.Clone(m)
	}
	return c
}

// NewTree builds a tree over entries (file order) with the given leaf (nil
// = empty branch). The slice is retained; do not modify it afterwards.
func NewTree(entries []*Entry, leaf *string) *Tree {
	n := len(entries)
	labels := 0 // the label maps are sized once (growing them rehashed every entry)
	for _, e := range entries {
		if e.Type == TypeLabel {
			labels++
		}
	}
	t := &Tree{
		entries: entries[:n:n],
		pos:     newIDIndex(n),
		parent:  make([]int32, n),
		kids:    newKidList(n),
		orphans: map[string][]int32{},
		labels:  make(map[string]string, labels),
		labelAt: make(map[int32]string, labels),
	}
	for i, e := range entries {
		t.pos.put(entries, e.ID, int32(i))
	}
	unique := t.pos.n == n
	for i, e := range entries {
		t.link(int32(i), unique)
		t.note(int32(i), e)
	}
	if leaf != nil {
		id := *leaf
		t.leaf = &id
	}
	return t
}

// NewPathTree is NewTree(path, id of its last entry) for a path as
// Tree.Path returns it (what a fork starts with): a chain whose first
// entry is a root and each other entry's parent the one before. Such a
// chain is indexed in one pass (ids, parents and children together; the
// labels and the session name, if any, after), instead of NewTree's
// three, and chain is true: the tree's branch is path. Anything else (a
// repeated id, a parent that is not the entry before, a first entry
// naming a parent) is left to NewTree, so the tree is NewTree's either
// way.
func NewPathTree(path []*Entry) (t *Tree, chain bool) {
	n := len(path)
	if n == 0 {
		return NewTree(path, nil), true
	}
	leaf := path[n-1].ID
	if path[0].ParentID != nil {
		return NewTree(path, &leaf), false
	}
	t = &Tree{
		entries: path[:n:n],
		pos:     newIDIndex(n),
		parent:  make([]int32, n),
		kids:    kidList{one: make([]int32, n)},
		roots:   []int32{0},
		orphans: map[string][]int32{},
		leaf:    &leaf,
	}
	notes, labels := false, 0
	prev := ""
	for i, e := range path {
		if i > 0 && (e.ParentID == nil || *e.ParentID != prev || e.ID == prev) {
			return NewTree(path, &leaf), false
		}
		if t.pos.put(path, e.ID, int32(i)); t.pos.n != i+1 {
			return NewTree(path, &leaf), false // a repeated id
		}
		t.parent[i] = int32(i) - 1
		t.kids.one[i] = int32(i) + 1
		switch e.Type {
		case TypeLabel:
			notes, labels = true, labels+1
		case TypeSessionInfo:
			notes = true
		}
		prev = e.ID
	}
	t.kids.one[n-1] = -1
	t.labels = make(map[string]string, labels)
	t.labelAt = make(map[int32]string, labels)
	if notes {
		for i, e := range path {
			t.note(int32(i), e)
		}
	}
	return t, true
}

// ForkPath returns the path to id (Path, nil when id is not in t) and,
// when it can be had for a copy, NewPathTree's tree of it: when the path
// is the whole of t in file order (t is one chain and id its last entry:
// a fork at the leaf of a session that never branched), the tree is t's
// own index copied (cloneChain) instead of one built again from the path,
// entry by entry. Otherwise tree is nil and the caller builds it with
// NewPathTree, which needs nothing of t (so off t's goroutine).
func (t *Tree) ForkPath(id string) (path []*Entry, tree *Tree) {
	path = t.Path(id)
	if path == nil || !t.isChain(path) {
		return path, nil
	}
	return path, t.cloneChain(path)
}

// isChain reports whether path, as Path returns it, is all of t's
// entries in file order, each (but the first, a root) the child of the
// one before, with no id repeated: the trees NewPathTree builds in one
// pass, and t is then the same tree.
func (t *Tree) isChain(path []*Entry) bool {
	n := len(path)
	if n == 0 || n != len(t.entries) || t.pos.n != n || path[0].ParentID != nil ||
		len(t.roots) != 1 || len(t.kids.many) != 0 || len(t.orphans) != 0 {
		return false
	}
	for i, e := range path {
		if t.entries[i] != e {
			return false
		}
	}
	return true
}

// cloneChain returns a copy of t over path (isChain: the same entries,
// in a slice of their own) with path's last entry as its leaf; nothing of
// it is shared with t but the entries, so either may grow.
func (t *Tree) cloneChain(path []*Entry) *Tree {
	n := len(path)
	leaf := path[n-1].ID
	c := &Tree{
		entries:   path[:n:n],
		pos:       t.pos.clone(),
		parent:    slices.Clone(t.parent[:n:n]),
		kids:      kidList{one: slices.Clone(t.kids.one[:n:n])}, // no entry has two children
		roots:     []int32{0},
		orphans:   map[string][]int32{},
		leaf:      &leaf,
		labels:    maps.Clone(t.labels), // copies the table, not key by key
		labelAt:   maps.Clone(t.labelAt),
		lateLabel: t.lateLabel,
		name:      t.name,
	}
	return c
}

// addKid appends i to q's children.
func (t *Tree) addKid(q, i int32) { t.kids.add(q, i) }

// link attaches entry i to its parent (or makes it a root). With unique
// (no id before i is repeated at or after it) a parent that is the entry
// just before, the usual case, is found without the map.
func (t *Tree) link(i int32, unique bool) {
	t.parent[i] = -1
	e := t.entries[i]
	if e.ParentID == nil {
		t.roots = append(t.roots, i)
		return
	}
	if unique && i > 0 && t.entries[i-1].ID == *e.ParentID && e.ID != *e.ParentID {
		t.parent[i] = i - 1
		t.addKid(i-1, i)
		return
	}
	q, ok := t.pos.get(t.entries, *e.ParentID)
	if ok && q != i {
		t.parent[i] = q
		t.addKid(q, i)
		return
	}
	t.roots = append(t.roots, i)
	if !ok {
		t.orphans[*e.ParentID] = append(t.orphans[*e.ParentID], i)
	}
}

// note records labels and the session name; e is entries[i].
func (t *Tree) note(i int32, e *Entry) {
	switch e.Type {
	case TypeLabel:
		target, label, ok := e.label()
		if !ok {
			return
		}
		if label != "" {
			t.labels[target] = label
		} else {
			delete(t.labels, target)
		}
		at, found := int32(-1), false
		if p := t.parent[i]; p >= 0 && t.entries[p].ID == target { // labelling the entry before
			at, found = p, true
		} else {
			at, found = t.pos.get(t.entries, target)
		}
		switch {
		case !found:
			t.lateLabel = true
		case label != "":
			t.labelAt[at] = label
		default:
			delete(t.labelAt, at)
		}
	case TypeSessionInfo:
		t.name = e.sessionName()
	}
}

// labelFields reads the targetId and label of a label entry; ok is false
// without a string targetId. The shape LabelEntry writes is read without
// scanning the body.
func labelFields(body []byte) (target, label string, ok bool) {
	if raw, fast := prefixString(body, labelPrefix); fast {
		rest := body[len(labelPrefix)+len(raw)+1:]
		if string(rest) == "}" {
			return string(raw), "", true
		}
		if l, fast := prefixString(rest, labelSecond); fast && len(rest) == len(labelSecond)+len(l)+2 {
			return string(raw), string(l), true
		}
	}
	target, ok = jsonobj.StringField(body, "targetId")
	if !ok {
		return "", "", false
	}
	label, _ = jsonobj.StringField(body, "label")
	return target, label, true
}

var (
	labelPrefix = []byte(`{"targetId":"`)
	labelSecond = []byte(`,"label":"`)
	namePrefix  = []byte(`{"name":"`)
)

// sessionName reads the name of a session_info entry ("" if none).
func sessionName(body []byte) string {
	if raw, fast := prefixString(body, namePrefix); fast && len(body) == len(namePrefix)+len(raw)+2 {
		return string(raw)
	}
	name, _ := jsonobj.StringField(body, "name")
	return name
}

// Append indexes e, which the caller has already written (with ParentID =
// the current leaf, or whatever parent it chose), and moves the leaf to it.
// It does not modify e.
func (t *Tree) Append(e *Entry) {
	i := int32(len(t.entries))
	t.entries = append(t.entries, e)
	t.parent = append(t.parent, -1)
	t.kids.one = append(t.kids.one, -1)
	if waiting, ok := t.orphans[e.ID]; ok { // earlier entries named e as parent
		delete(t.orphans, e.ID)
		for _, w := range waiting {
			t.parent[w] = i
			t.kids.add(i, w)
		}
		t.roots = slices.DeleteFunc(t.roots, func(r int32) bool { return t.parent[r] >= 0 })
	}
	t.pos.put(t.entries, e.ID, i)
	t.link(i, true) // only e follows entries[i-1]: pos names it unless e has its id
	t.note(i, e)
	id := e.ID
	t.leaf = &id
}

// Len returns the number of entries.
func (t *Tree) Len() int { return len(t.entries) }

// Entries returns all entries in file order. The slice must not be modified.
func (t *Tree) Entries() []*Entry { return t.entries[:len(t.entries):len(t.entries)] }

// Get returns the entry with id, or nil.
func (t *Tree) Get(id string) *Entry {
	if i, ok := t.pos.get(t.entries, id); ok {
		return t.entries[i]
	}
	return nil
}

// Leaf returns the active leaf id (nil = empty branch, before the first
// root). The caller gets its own copy.
func (t *Tree) Leaf() *string {
	if t.leaf == nil {
		return nil
	}
	id := *t.leaf
	return &id
}

// SetLeaf moves the active leaf (nil = empty branch). It only changes the
// tree; persisting the move (File.AppendLeaf) is the caller's job.
func (t *Tree) SetLeaf(id *string) error {
	if id == nil {
		t.leaf = nil
		return nil
	}
	if _, ok := t.pos.get(t.entries, *id); !ok {
		return fmt.Errorf("%w: %s", ErrUnknownEntry, *id)
	}
	leaf := *id
	t.leaf = &leaf
	return nil
}

// Branch returns the active branch, root → leaf (empty for a nil leaf).
func (t *Tree) Branch() []*Entry {
	if t.leaf == nil {
		return nil
	}
	return t.Path(*t.leaf)
}

// Path returns the entries from the root down to id, inclusive (nil if id
// is unknown). A parent cycle (possible only in hand-written files) ends
// the path at the first repeated entry.
func (t *Tree) Path(id string) []*Entry {
	i, ok := t.pos.get(t.entries, id)
	if !ok {
		return nil
	}
	// Two walks up: one to count, one to fill the exact slice from its
	// end (a long branch is a large slice; no doubling, no reverse).
	steps := 0
	for cur := i; cur >= 0; cur = t.parent[cur] {
		if steps++; steps > len(t.entries) {
			return t.pathNoCycle(i)
		}
	}
	out := make([]*Entry, steps)
	for cur := i; cur >= 0; cur = t.parent[cur] {
		steps--
		out[steps] = t.entries[cur]
	}
	return out
}

// Tail returns the active branch from id to the leaf, inclusive (nil when
// id is not on the active branch). It walks up from the leaf only as far
// as id, so its cost is the length of what it returns, not the branch's.
func (t *Tree) Tail(id string) []*Entry {
	i, ok := t.pos.get(t.entries, id)
	if !ok || t.leaf == nil {
		return nil
	}
	leaf, ok := t.pos.get(t.entries, *t.leaf)
	if !ok {
		return nil
	}
	steps := 0
	cur := leaf
	for ; cur >= 0 && cur != i; cur = t.parent[cur] {
		if steps++; steps > len(t.entries) { // a parent cycle
			return t.tailOf(t.Branch(), id)
		}
	}
	if cur < 0 {
		// Not an ancestor of the leaf; a repeated id may still be on
		// the branch under another index.
		if t.pos.n == len(t.entries) { // ids are unique
			return nil
		}
		return t.tailOf(t.Branch(), id)
	}
	out := make([]*Entry, steps+1)
	for cur := leaf; ; cur = t.parent[cur] {
		out[steps] = t.entries[cur]
		if cur == i {
			return out
		}
		steps--
	}
}

// tailOf returns branch from the first entry with id on (nil if none).
func (t *Tree) tailOf(branch []*Entry, id string) []*Entry {
	for k, e := range branch {
		if e.ID == id {
			return branch[k:]
		}
	}
	return nil
}

func (t *Tree) pathNoCycle(i int32) []*Entry {
	var out []*Entry
	seen := map[int32]bool{}
	for cur := i; cur >= 0 && !seen[cur]; cur = t.parent[cur] {
		seen[cur] = true
		out = append(out, t.entries[cur])
	}
	slices.Reverse(out)
	return out
}

// Children returns the children of id in file order.
func (t *Tree) Children(id string) []*Entry {
	i, ok := t.pos.get(t.entries, id)
	if !ok {
		return nil
	}
	return t.list(t.kids.of(i))
}

// Roots returns the roots in file order.
func (t *Tree) Roots() []*Entry { return t.list(t.roots) }

func (t *Tree) list(idx []int32) []*Entry {
	out := make([]*Entry, len(idx))
	for k, i := range idx {
		out[k] = t.entries[i]
	}
	return out
}

// Label returns the label of entry id (the latest label entry for it; an
// empty or absent label clears).
func (t *Tree) Label(id string) (string, bool) {
	l, ok := t.labels[id]
	return l, ok
}

// Name returns the session name: the name of the last session_info entry.
func (t *Tree) Name() string { return t.name }

// Since returns the entries after id in file order (id itself excluded), as
// get_entries does with its since cursor. An unknown id yields every entry
// and found = false (the reference behaviour: the client starts over).
func (t *Tree) Since(id string) (entries []*Entry, found bool) {
	i, ok := t.pos.get(t.entries, id)
	if !ok {
		return slices.Clone(t.entries), false
	}
	return slices.Clone(t.entries[i+1:]), true
}

// Node is one node of the get_tree view: {"entry", "children", "label"?}.
type Node struct {
	Entry    *Entry
	Children []*Node
	Label    string // "" = no label
}

// Nodes returns the forest for get_tree: roots in file order, children in
// file order, labels attached.
func (t *Tree) Nodes() []*Node {
	n := len(t.entries)
	nodes := make([]Node, n)
	ptrs := make([]*Node, 0, n) // backing store of every Children slice
	for i, e := range t.entries {
		nodes[i] = Node{Entry: e, Label: t.labels[e.ID]}
	}
	for i := range nodes {
		start := len(ptrs)
		for _, k := range t.kids.of(int32(i)) {
			ptrs = append(ptrs, &nodes[k])
		}
		if len(ptrs) > start {
			nodes[i].Children = ptrs[start:len(ptrs):len(ptrs)]
		}
	}
	roots := make([]*Node, len(t.roots))
	for k, i := range t.roots {
		roots[k] = &nodes[i]
	}
	return roots
}

// MarshalJSON writes the node and its subtree. encoding/json refuses
// nesting deeper than 10000 levels; for deeper trees write the output with
// AppendNodesJSON directly.
func (n *Node) MarshalJSON() ([]byte, error) {
	b := AppendNodesJSON(nil, []*Node{n})
	return b[1 : len(b)-1], nil
}

// AppendNodesJSON appends nodes as a JSON array of {"entry", "children",
// "label"?} objects. It does not recurse, so any depth works.
// dst grows once, to the size the nodes' encoded lengths add up to.
func AppendNodesJSON(dst []byte, nodes []*Node) []byte {
	j := NewNodesJSON(nodes)
	dst = slices.Grow(dst, j.size+nodesSlack)
	return j.walk(dst, treeOut{})
}

// NodesJSON is the get_tree JSON of a forest, measured (one walk) and
// ready to be written in vectors (WriteVec). It holds the forest
// as a kidList, so a tree as long as its session costs an int32 a node,
// not a Node.
type NodesJSON struct {
	entries []*Entry
	kids    kidList
	roots   []int32
	// labelled marks the nodes with a label (a bit each); label holds them.
	labelled []uint64
	label    map[int32]string
	// size is the JSON's length (measure).
	size int
}

// NewNodesJSON measures the JSON of nodes.
func NewNodesJSON(nodes []*Node) NodesJSON {
	// Nodes numbered breadth first: the roots, then each node's children
	// in turn, so each node's children are consecutive numbers.
	var j NodesJSON
	queue := slices.Clone(nodes)
	j.roots = make([]int32, len(nodes))
	for k := range nodes {
		j.roots[k] = int32(k)
	}
	for i := 0; i < len(queue); i++ {
		n := queue[i]
		j.entries = append(j.entries, n.Entry)
		j.kids.one = append(j.kids.one, -1)
		for _, c := range n.Children {
			j.kids.add(int32(i), int32(len(queue)))
			queue = append(queue, c)
		}
		if n.Label != "" {
			j.setLabel(int32(i), n.Label)
		}
	}
	j.measure()
	return j
}

// NodesJSON returns the get_tree JSON of the tree (Nodes' forest) without
// building the nodes. It holds a copy of the tree's shape, so the tree may
// change afterwards; the entries are shared (the tree only appends to its
// list, and entries are immutable).
func (t *Tree) NodesJSON() NodesJSON {
	n := len(t.entries)
	j := NodesJSON{entries: t.entries[:n:n], kids: t.kids.clone(n), roots: slices.Clone(t.roots)}
	if len(t.labels) > 0 {
		j.labelled = make([]uint64, (len(j.entries)+64)/64+1)
		j.label = make(map[int32]string, len(t.labels))
		switch {
		case t.pos.n == n && !t.lateLabel: // unique ids, every label's target known when noted
			for i, l := range t.labelAt {
				j.setLabel(i, l)
			}
		case t.pos.n == n: // unique ids: each label names one entry
			for id, l := range t.labels {
				if i, ok := t.pos.get(t.entries, id); ok {
					j.setLabel(i, l)
				}
			}
		default:
			for i, e := range t.entries {
				if l := t.labels[e.ID]; l != "" {
					j.setLabel(int32(i), l)
				}
			}
		}
	}
	j.measure()
	return j
}

func (j *NodesJSON) setLabel(i int32, l string) {
	if j.labelled == nil {
		j.labelled = make([]uint64, (len(j.entries)+64)/64+1)
		j.label = map[int32]string{}
	}
	for int(i/64) >= len(j.labelled) {
		j.labelled = append(j.labelled, 0)
	}
	j.labelled[i/64] |= 1 << (i % 64)
	j.label[i] = l
}

// labelOf returns node i's label ("" for none).
func (j *NodesJSON) labelOf(i int32) string {
	if int(i/64) < len(j.labelled) && j.labelled[i/64]&(1<<(i%64)) != 0 {
		return j.label[i]
	}
	return ""
}

// Len returns about the length of the JSON array that AppendNodesJSON and
// WriteVec write: at most 3 bytes a node more, unless an id, type,
// timestamp or label needs escaping.
func (j NodesJSON) Len() int { return j.size }

// WriteVec writes head, the JSON array of AppendNodesJSON and tail as
// vectors of pieces handed to flush, which may keep them only until it
// returns. Each piece is wire-clean (jsonstr.WireClean), which head and
// tail must be already: an entry whose stored bytes are (factClean, and
// plain) is written as it is stored, its body a piece of its own where
// it is long, not copied (the writer hands the vector to writev); any
// other is encoded and made clean (jsonstr.AppendWireSafe), so the bytes
// are those of AppendNodesJSON after stdio.ValidUTF8. A get_tree as
// large as its session is never built in memory, nor copied into one.
func (j NodesJSON) WriteVec(head, tail []byte, flush func(vec [][]byte)) {
	v := &vecOut{flush: flush, vec: make([][]byte, 0, vecPieces+2)}
	buf := append(make([]byte, 0, vecBuf+vecBuf/4), head...)
	buf = j.walk(buf, treeOut{vec: v})
	buf = append(buf, tail...)
	v.cut(buf)
}

// The vectors of WriteVec: at most vecPieces pieces (writev takes 1024
// at once) and vecBuf bytes of copied structure each; a body shorter than
// vecRef is copied too (a piece of its own costs the kernel more than the
// copy).
const (
	vecPieces = 1000
	vecBuf    = 64 << 10
	vecRef    = 16 << 10
)

// vecOut collects the pieces of WriteVec's vectors: the bytes of buf from
// from on are not in vec yet.
type vecOut struct {
	vec   [][]byte
	from  int
	flush func([][]byte)
}

// ref adds p, which nobody changes, as a piece after buf's bytes so far
// (copied into buf when short).
func (v *vecOut) ref(buf, p []byte) []byte {
	if len(p) < vecRef {
		return append(buf, p...)
	}
	if len(buf) > v.from {
		v.vec = append(v.vec, buf[v.from:])
	}
	v.vec = append(v.vec, p)
	v.from = len(buf)
	return buf
}

// cut hands the vector so far, buf's last bytes included, to flush and
// returns buf emptied. (A buf that grew while pieces pointed into it left
// them in its old array, unchanged.)
func (v *vecOut) cut(buf []byte) []byte {
	if len(buf) > v.from {
		v.vec = append(v.vec, buf[v.from:])
	}
	if len(v.vec) > 0 {
		v.flush(v.vec)
	}
	clear(v.vec)
	v.vec, v.from = v.vec[:0], 0
	return buf[:0]
}

// treeOut is where walk writes: all into dst (the zero value), or in
// vectors (vec: WriteVec).
type treeOut struct {
	vec *vecOut
}

// full reports that dst should be handed on before the next node.
func (o *treeOut) full(dst []byte) bool {
	return o.vec != nil && (len(dst) >= vecBuf || len(o.vec.vec) >= vecPieces)
}

// cut hands dst on and returns it emptied.
func (o *treeOut) cut(dst []byte) []byte { return o.vec.cut(dst) }

// entry appends e's JSON (AppendJSON): for a vector, as it is stored
// when it is wire-ready, else made clean.
func (o *treeOut) entry(dst []byte, e *Entry) []byte {
	if o.vec == nil {
		return e.AppendJSON(dst)
	}
	if e.wireReady() {
		dst = e.appendPlainHead(dst)
		dst = o.vec.ref(dst, e.plainInner())
		return e.appendPlainTail(dst)
	}
	start := len(dst)
	return wireSafe(e.AppendJSON(dst), start)
}

// label appends a node's label as a JSON string (made clean for a
// vector).
func (o *treeOut) label(dst []byte, l string) []byte {
	start := len(dst)
	dst = appendJSONString(dst, l)
	if o.vec == nil {
		return dst
	}
	return wireSafe(dst, start)
}

// wireSafe makes out[start:] wire-clean, as stdio.ValidUTF8 would on the
// way out.
func wireSafe(out []byte, start int) []byte {
	if jsonstr.WireClean(out[start:]) {
		return out
	}
	raw := bytes.Clone(out[start:])
	return jsonstr.AppendWireSafe(out[:start], raw)
}

// frame is a list of nodes being written: the roots (owner -1) or the
// children of owner, from position next on. Once it is closed, carry more
// nodes close after it: the unlabelled nodes of one child each above
// owner, a chain that gets no frame per node.
type frame struct {
	list               []int32
	owner, next, carry int32
}

// walk appends the array of the roots to dst; with o.vec, it
// hands dst on and starts over whenever it is full (o.full). It does not
// recurse, and a chain (a long session's tree is one, as deep as its
// length) takes no stack: only a node with a label or more than one
// child has a frame.
func (j *NodesJSON) walk(dst []byte, o treeOut) []byte {
	dst = append(dst, '[')
	stack := make([]frame, 1, 16)
	stack[0] = frame{list: j.roots, owner: -1}
	for len(stack) > 0 {
		if o.full(dst) {
			dst = o.cut(dst)
		}
		top := &stack[len(stack)-1]
		if int(top.next) == len(top.list) {
			dst = append(dst, ']')
			if top.owner >= 0 { // a children array: close its node
				dst = j.closeNode(dst, top.owner, &o)
			}
			carry := top.carry
			stack = stack[:len(stack)-1]
			dst = closeRun(dst, carry, &o)
			continue
		}
		n := top.list[top.next]
		if top.next > 0 {
			dst = append(dst, ',')
		}
		top.next++
		for carry := int32(0); ; carry++ { // down n's chain
			dst = append(dst, `{"entry":`...)
			dst = o.entry(dst, j.entries[n])
			dst = append(dst, `,"children":[`...)
			c := j.kids.one[n]
			if c >= 0 && j.labelOf(n) == "" { // n closes right after its one child
				n = c
				if o.full(dst) {
					dst = o.cut(dst)
				}
				continue
			}
			if c == -1 { // a leaf: closed at once, and the chain above it
				dst = append(dst, ']')
				dst = j.closeNode(dst, n, &o)
				dst = closeRun(dst, carry, &o)
				break
			}
			stack = append(stack, frame{list: j.kids.of(n), owner: n, carry: carry})
			break
		}
	}
	return dst
}

// closeNode appends the end of node n's object after its children: its
// label, if any, and the brace.
func (j *NodesJSON) closeNode(dst []byte, n int32, o *treeOut) []byte {
	if l := j.labelOf(n); l != "" {
		dst = append(dst, `,"label":`...)
		dst = o.label(dst, l)
	}
	return append(dst, '}')
}

// closeRun appends the ends of carry chain nodes (unlabelled: "]}" each).
func closeRun(dst []byte, carry int32, o *treeOut) []byte {
	for ; carry > 0; carry-- {
		if o.full(dst) {
			dst = o.cut(dst)
		}
		dst = append(dst, "]}"...)
	}
	return dst
}

// nodesSlack is room left after AppendNodesJSON's output for the caller's
// closing bytes (rpc's envelope).
const nodesSlack = 64

// measure sets the length of the JSON (exact unless an id, type,
// timestamp or label needs escaping), counting the nodes reachable from
// the roots, as walk writes them.
func (j *NodesJSON) measure() {
	const perNode = len(`{"entry":,"children":[]}`) + 1 // and a comma
	size := 2
	var stack []int32
	add := func(list []int32) {
		for _, n := range list {
			size += perNode + j.entries[n].jsonLen()
			if l := j.labelOf(n); l != "" {
				size += len(`,"label":""`) + len(l)
			}
			if j.kids.one[n] != -1 {
				stack = append(stack, n)
			}
		}
	}
	add(j.roots)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		add(j.kids.of(n))
	}
	j.size = size
}

package store

import (
	"fmt"
	"slices"
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
	pos     idIndex   // id → index in entries
	parent  []int32   // index of the parent, -1 for a root
	kids    [][]int32 // children in file order
	roots   []int32
	orphans map[string][]int32 // missing parent id → roots waiting for it
	leaf    *string
	labels  map[string]string
	name    string
}

// NewTree builds a tree over entries (file order) with the given leaf (nil
// = empty branch). The slice is retained; do not modify it afterwards.
func NewTree(entries []*Entry, leaf *string) *Tree {
	n := len(entries)
	t := &Tree{
		entries: entries[:n:n],
		pos:     newIDIndex(n),
		parent:  make([]int32, n),
		kids:    make([][]int32, n),
		orphans: map[string][]int32{},
		labels:  map[string]string{},
	}
	for i, e := range entries {
		t.pos.put(entries, e.ID, int32(i))
	}
	unique := t.pos.n == n
	for i, e := range entries {
		t.link(int32(i), unique)
		t.note(e)
	}
	if leaf != nil {
		id := *leaf
		t.leaf = &id
	}
	return t
}

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
		t.kids[i-1] = append(t.kids[i-1], i)
		return
	}
	q, ok := t.pos.get(t.entries, *e.ParentID)
	if ok && q != i {
		t.parent[i] = q
		t.kids[q] = append(t.kids[q], i)
		return
	}
	t.roots = append(t.roots, i)
	if !ok {
		t.orphans[*e.ParentID] = append(t.orphans[*e.ParentID], i)
	}
}

// note records labels and the session name.
func (t *Tree) note(e *Entry) {
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
	target, ok = objectString(body, "targetId")
	if !ok {
		return "", "", false
	}
	label, _ = objectString(body, "label")
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
	name, _ := objectString(body, "name")
	return name
}

// Append indexes e, which the caller has already written (with ParentID =
// the current leaf, or whatever parent it chose), and moves the leaf to it.
// It does not modify e.
func (t *Tree) Append(e *Entry) {
	i := int32(len(t.entries))
	t.entries = append(t.entries, e)
	t.parent = append(t.parent, -1)
	t.kids = append(t.kids, nil)
	if waiting, ok := t.orphans[e.ID]; ok { // earlier entries named e as parent
		delete(t.orphans, e.ID)
		for _, w := range waiting {
			t.parent[w] = i
		}
		t.kids[i] = waiting
		t.roots = slices.DeleteFunc(t.roots, func(r int32) bool { return t.parent[r] >= 0 })
	}
	t.pos.put(t.entries, e.ID, i)
	t.link(i, true) // only e follows entries[i-1]: pos names it unless e has its id
	t.note(e)
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
	return t.list(t.kids[i])
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
		for _, k := range t.kids[i] {
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
	size, depth := nodesJSONLen(nodes)
	dst = slices.Grow(dst, size+nodesSlack)
	type frame struct {
		list []*Node
		next int
	}
	dst = append(dst, '[')
	stack := make([]frame, 1, depth+1)
	stack[0] = frame{list: nodes}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.list) {
			dst = append(dst, ']')
			stack = stack[:len(stack)-1]
			if len(stack) > 0 { // that was a children array: close its node
				up := stack[len(stack)-1]
				if owner := up.list[up.next-1]; owner.Label != "" {
					dst = append(dst, `,"label":`...)
					dst = appendJSONString(dst, owner.Label)
				}
				dst = append(dst, '}')
			}
			continue
		}
		n := top.list[top.next]
		if top.next > 0 {
			dst = append(dst, ',')
		}
		top.next++
		dst = append(dst, `{"entry":`...)
		dst = n.Entry.AppendJSON(dst)
		dst = append(dst, `,"children":[`...)
		stack = append(stack, frame{list: n.Children})
	}
	return dst
}

// nodesSlack is room left after AppendNodesJSON's output for the caller's
// closing bytes (rpc's envelope).
const nodesSlack = 64

// nodesJSONLen returns the length of AppendNodesJSON's output for nodes
// (exact unless an id, type, timestamp or label needs escaping) and the
// depth of the deepest node. It walks the nodes without recursion, like
// AppendNodesJSON.
func nodesJSONLen(nodes []*Node) (size, depth int) {
	const perNode = len(`{"entry":,"children":[]}`) + 1 // and a comma
	type level struct {
		list  []*Node
		depth int
	}
	size = 2
	stack := []level{{nodes, 1}}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		depth = max(depth, top.depth)
		for _, n := range top.list {
			size += perNode + n.Entry.jsonLen()
			if n.Label != "" {
				size += len(`,"label":""`) + len(n.Label)
			}
			if len(n.Children) > 0 {
				stack = append(stack, level{n.Children, top.depth + 1})
			}
		}
	}
	return size, depth + 1
}

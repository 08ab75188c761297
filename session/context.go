package session

import (
	"go.uber.org/zap"

	"sort"
	"strings"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

// modelContext is the projection of the active branch sent to the model.
type modelContext struct {
	system   string
	sections llm.Sections
	messages []llm.Message
	// fresh is the index of the first message recorded after the latest
	// compaction: usage reported before it describes a context that no
	// longer exists.
	fresh int
}

// context projects the active branch (compactions, context edits and
// custom messages applied); system checkpoints form the system prompt. It
// reads the kept projection (ctxCache), which is extended on append and
// rebuilt only when the branch changed otherwise. The messages slice is
// capped at its length: appending to it copies, and the runner may keep
// it while the actor extends the cache.
func (st *state) context() modelContext {
	c := st.ctxView()
	c.materialise(st)
	n := len(c.msgs)
	return modelContext{system: c.system, sections: c.sections, messages: c.msgs[:n:n], fresh: c.fresh}
}

// contextOf projects branch afresh: a branch that is not the active one
// (a compaction not yet appended, to weigh it).
func (st *state) contextOf(branch []*store.Entry) modelContext {
	var c ctxCache
	c.build(st, branch)
	c.materialise(st)
	return modelContext{system: c.system, sections: c.sections, messages: c.msgs, fresh: c.fresh}
}

// ctxCache is the projection of the active branch, kept between commands
// (issue 19, "project once and keep it"). It belongs to the actor. It is
// valid for one tree and one last entry; appends at that entry extend it
// (store.Projection.Append), anything else (rewind, fork, switch, a
// compaction, a context edit, a system patch) projects the branch once
// more. Messages are decoded only when a caller needs them (materialise):
// get_state counts them without.
type ctxCache struct {
	tree     *store.Tree // the tree it was built from (nil: none yet)
	treeLen  int         // tree.Len() when it was last brought up to date
	proj     *store.Projection
	conv     []int32       // indices in proj of the conversation (non-system) messages
	msgs     []llm.Message // conv decoded, a prefix of it (materialise)
	fresh    int           // index in conv of the first message after the latest compaction
	system   string
	sections llm.Sections
	builds   int // projections afresh, for tests
	// counts of msgs, for get_session_stats
	users, assistants, toolCalls, toolResults int
}

// ctxView brings the kept projection up to date with the active branch.
func (st *state) ctxView() *ctxCache {
	c := &st.ctx
	var leaf *store.Entry
	if id := st.tree.Leaf(); id != nil {
		leaf = st.tree.Get(*id)
	}
	switch {
	case c.tree != st.tree || c.proj == nil:
		c.build(st, st.branch())
	case c.proj.Last() == leaf:
	default:
		if !c.extend(st, leaf) {
			c.build(st, st.branch())
		}
	}
	c.treeLen = st.tree.Len()
	return c
}

// extend appends the entries between the cached last entry and leaf, when
// leaf descends from it through entries appended since the cache was
// brought up to date. It reports false when the branch must be projected
// afresh.
func (c *ctxCache) extend(st *state, leaf *store.Entry) bool {
	budget := st.tree.Len() - c.treeLen
	last := c.proj.Last()
	var path []*store.Entry
	for e := leaf; e != last; {
		if e == nil || len(path) >= budget {
			return false
		}
		path = append(path, e)
		if e.ParentID == nil {
			e = nil
		} else if e = st.tree.Get(*e.ParentID); e == nil {
			return false
		}
	}
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		n := c.proj.Len()
		if !c.proj.Append(e) {
			return false
		}
		for k := n; k < c.proj.Len(); k++ { // Append adds conversation messages only
			c.conv = append(c.conv, int32(k))
		}
	}
	return true
}

// build projects branch afresh.
func (c *ctxCache) build(st *state, branch []*store.Entry) {
	*c = ctxCache{tree: st.tree, builds: c.builds + 1}
	p, err := store.NewProjection(branch)
	if err != nil {
		st.s.log.Warn("project context", zap.Error(err))
	}
	c.proj = p
	c.conv = make([]int32, 0, p.Len())
	c.fresh = -1
	for i := range p.Len() {
		if p.IsSystem(i) {
			continue
		}
		if c.fresh < 0 && i >= p.Fresh() {
			c.fresh = len(c.conv)
		}
		c.conv = append(c.conv, int32(i))
	}
	if c.fresh < 0 {
		c.fresh = len(c.conv)
	}
	if p.Info.System != nil {
		c.sections = p.Info.System.Sections
	}
	c.system = strings.Join(c.sections.List(), "\n\n")
}

// materialise decodes the conversation messages not decoded yet. A message
// that cannot be decoded leaves the context empty, as a failed projection
// does.
func (c *ctxCache) materialise(st *state) {
	for len(c.msgs) < len(c.conv) {
		m, err := c.proj.Message(int(c.conv[len(c.msgs)]))
		if err != nil {
			st.s.log.Warn("project context", zap.Error(err))
			*c = ctxCache{tree: c.tree, treeLen: c.treeLen, proj: &store.Projection{}, builds: c.builds, system: c.system, sections: c.sections}
			return
		}
		c.msgs = append(c.msgs, m)
		switch m := m.(type) {
		case *llm.UserMessage:
			c.users++
		case *llm.AssistantMessage:
			c.assistants++
			c.toolCalls += len(m.ToolCalls())
		case *llm.ToolResultMessage:
			c.toolResults++
		}
	}
}

// allTools returns the registry's tools (nil registry: none).
func (st *state) allTools() []tools.Tool {
	var list []tools.Tool
	if st.s.deps.Tools != nil {
		list = st.s.deps.Tools.Tools()
	}
	list = list[:len(list):len(list)] // never append into the registry's array
	if st.mcpTools != nil {
		list = append(list, st.mcpTools.Tools()...)
	}
	if st.s.deps.Settings.InspectTool {
		list = append(list, inspectTool{st.s})
	}
	return list
}

// isActive reports whether the tool is offered to the model.
func (st *state) isActive(name string) bool {
	if st.activeTools == nil {
		return true
	}
	return st.activeTools[name]
}

// activeDecls returns the declarations of the active tools, sorted by
// name; tools taken up after the session's start follow, in the order they
// came (append-only, so the table's prefix stays byte-stable).
func (st *state) activeDecls() []llm.ToolDecl {
	var out, late []llm.ToolDecl
	pos := map[string]int{}
	for i, n := range st.lateTools {
		pos[n] = i + 1
	}
	for _, t := range st.allTools() {
		if d := t.Decl(); st.isActive(d.Name) {
			if pos[d.Name] > 0 {
				late = append(late, d)
			} else {
				out = append(out, d)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	sort.Slice(late, func(i, j int) bool { return pos[late[i].Name] < pos[late[j].Name] })
	return append(out, late...)
}

// messageCount counts conversation messages on the branch (system
// checkpoints excluded).
func (st *state) messageCount() int {
	return len(st.ctxView().conv)
}

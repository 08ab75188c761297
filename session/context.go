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
// custom messages applied); system checkpoints form the system prompt.
func (st *state) context() modelContext { return st.contextOf(st.branch()) }

// contextOf projects branch (the active one, or one with a compaction not
// yet appended, to weigh it).
func (st *state) contextOf(branch []*store.Entry) modelContext {
	var c modelContext
	msgs, info, err := store.Project(branch)
	if err != nil {
		st.s.log.Warn("project context", zap.Error(err))
	}
	// Messages kept by a compaction precede it on the branch; only those
	// recorded after it carry usage that describes this context.
	cut := -1
	if info.Compaction != nil {
		for i, e := range branch {
			if e == info.Compaction {
				cut = i
				break
			}
		}
	}
	pos := map[*store.Entry]int{}
	if cut >= 0 {
		for i, e := range branch {
			pos[e] = i
		}
	}
	c.fresh = -1
	for i, m := range msgs {
		if _, ok := m.(*llm.SystemMessage); ok {
			continue
		}
		if c.fresh < 0 && (cut < 0 || (i < len(info.Entries) && pos[info.Entries[i]] > cut)) {
			c.fresh = len(c.messages)
		}
		c.messages = append(c.messages, m)
	}
	if c.fresh < 0 {
		c.fresh = len(c.messages)
	}
	if info.System != nil {
		c.sections = info.System.Sections
	}
	c.system = strings.Join(c.sections.List(), "\n\n")
	return c
}

// allTools returns the registry's tools (nil registry: none).
func (st *state) allTools() []tools.Tool {
	if st.s.deps.Tools == nil {
		return nil
	}
	return st.s.deps.Tools.Tools()
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
	return len(st.context().messages)
}

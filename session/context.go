package session

import (
	"go.uber.org/zap"

	"sort"
	"strings"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session/store"
	"github.com/armadra/ama-rpc/tools"
)

// modelContext is the projection of the active branch sent to the model.
type modelContext struct {
	system   string
	sections llm.Sections
	messages []llm.Message
}

// context projects the active branch (compactions, context edits and
// custom messages applied); system checkpoints form the system prompt.
func (st *state) context() modelContext {
	var c modelContext
	msgs, info, err := store.Project(st.branch())
	if err != nil {
		st.s.log.Warn("project context", zap.Error(err))
	}
	for _, m := range msgs {
		if _, ok := m.(*llm.SystemMessage); !ok {
			c.messages = append(c.messages, m)
		}
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

// activeDecls returns the declarations of the active tools, sorted by name.
func (st *state) activeDecls() []llm.ToolDecl {
	var out []llm.ToolDecl
	for _, t := range st.allTools() {
		if d := t.Decl(); st.isActive(d.Name) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// messageCount counts conversation messages on the branch (system
// checkpoints excluded).
func (st *state) messageCount() int {
	return len(st.context().messages)
}

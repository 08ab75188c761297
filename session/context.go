package session

import (
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

// context projects the active branch: system checkpoints merge into the
// system prompt, messages and custom messages form the conversation.
func (st *state) context() modelContext {
	var c modelContext
	for _, e := range st.branch() {
		switch e.Type {
		case store.TypeMessage:
			m, err := e.Message()
			if err != nil {
				continue
			}
			if sys, ok := m.(*llm.SystemMessage); ok {
				c.sections = c.sections.Merge(sys.Sections)
				continue
			}
			c.messages = append(c.messages, m)
		case store.TypeCustomMessage:
			var cm llm.CustomMessage
			if err := e.Decode(&cm); err == nil {
				cm.Role = llm.RoleCustom
				c.messages = append(c.messages, &cm)
			}
		}
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

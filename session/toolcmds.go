package session

import (
	"fmt"
	"sort"
	"strings"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
)

// ToolInfo describes a registered tool for get_tools.
type ToolInfo struct {
	Decl       llm.ToolDecl
	Permission string
	Active     bool
	// Server is the MCP server of an MCP tool ("": not one).
	Server string
}

// Tools lists every registered tool in registry order.
func (s *Session) Tools() ([]ToolInfo, error) {
	return call(s, func(st *state) []ToolInfo {
		var out []ToolInfo
		for _, t := range st.allTools() {
			d := t.Decl()
			info := ToolInfo{Decl: d, Permission: t.Permission(), Active: st.isActive(d.Name)}
			if m, ok := t.(interface{ MCPServer() string }); ok {
				info.Server = m.MCPServer()
			}
			out = append(out, info)
		}
		return out
	})
}

// SetActiveTools selects the tools offered to the model and returns the
// active names sorted. Unknown names are rejected. The change is recorded
// as a system patch (tools added and removed).
func (s *Session) SetActiveTools(names []string) ([]string, error) {
	type out struct {
		names []string
		err   error
	}
	o, err := call(s, func(st *state) out {
		known := map[string]tools.Tool{}
		for _, t := range st.allTools() {
			known[t.Decl().Name] = t
		}
		want := map[string]bool{}
		var unknown []string
		for _, n := range names {
			if _, ok := known[n]; !ok {
				unknown = append(unknown, n)
			}
			want[n] = true
		}
		if len(unknown) > 0 {
			return out{err: fmt.Errorf("%w: unknown tools: %s", ErrInvalidArguments, strings.Join(unknown, ", "))}
		}
		var added []llm.ToolDecl
		var removed []string
		for name, t := range known {
			switch was := st.isActive(name); {
			case want[name] && !was:
				added = append(added, t.Decl())
			case !want[name] && was:
				removed = append(removed, name)
			}
		}
		st.activeTools = want
		if len(added)+len(removed) > 0 {
			sort.Slice(added, func(i, j int) bool { return added[i].Name < added[j].Name })
			sort.Strings(removed)
			sec := st.systemSections()
			patch := &llm.SystemMessage{Role: llm.RoleSystem, Sections: llm.Sections{Tools: sec.Tools}, Timestamp: st.nowMs(),
				ToolsAdded: added, ToolsRemoved: removed}
			if sec.Tools == nil {
				empty := ""
				patch.Sections.Tools = &empty
			}
			st.appendEntry(store.MessageEntry(patch))
		}
		active := make([]string, 0, len(want))
		for n := range want {
			active = append(active, n)
		}
		sort.Strings(active)
		return out{names: active}
	})
	if err != nil {
		return nil, err
	}
	return o.names, o.err
}

package host

import (
	"encoding/json"
	"fmt"

	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/tools"
)

// This file is the tool set sessions see while a host adapter is active:
// the start-up registry (built-ins and the tools registered during
// create()) plus the tools registered after create() returned
// (host-api.md §4.1: appended to the live session). Sessions take those
// up at their next model request (session.GrowingToolSet).

// lateTool is a tool registered after create(), with its own compiled
// schema (the start-up registry's is fixed).
type lateTool struct {
	def ToolDef
	reg *tools.Registry
}

func newLateTool(h *Host, d ToolDef) (*lateTool, error) {
	reg, err := tools.NewRegistry(&Tool{h: h, def: d})
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", d.Name, err)
	}
	return &lateTool{def: d, reg: reg}, nil
}

// ToolSet joins base (the start-up registry) and the adapter's late tools.
// A tool disabled after create() stays in the sessions that took it up
// (the disable changes tools.list() only; ama leaves this open).
func (h *Host) ToolSet(base session.ToolSet) session.GrowingToolSet {
	return &toolSet{base: base, h: h}
}

type toolSet struct {
	base session.ToolSet
	h    *Host
}

func (s *toolSet) lateTools() []*lateTool {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	return append([]*lateTool(nil), s.h.late...)
}

// Tools returns the start-up tools, then the late ones in registration
// order.
func (s *toolSet) Tools() []tools.Tool {
	out := s.base.Tools()
	for _, t := range s.lateTools() {
		out = append(out, &Tool{h: s.h, def: t.def})
	}
	return out
}

// Validate checks args against the tool's schema.
func (s *toolSet) Validate(name string, args json.RawMessage) error {
	for _, t := range s.lateTools() {
		if t.def.Name == name {
			return t.reg.Validate(name, args)
		}
	}
	return s.base.Validate(name, args)
}

// Added lists the late tools in registration order.
func (s *toolSet) Added() []string {
	var out []string
	for _, t := range s.lateTools() {
		out = append(out, t.def.Name)
	}
	return out
}

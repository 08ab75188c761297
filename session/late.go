package session

import (
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// This file takes up what a host adapter adds after start-up
// (host-api.md §4.1, §4.4): tools registered after create() join a root
// session's active set at its next model request, instructions added later
// its host section at its next prompt, each recorded as a system patch.

// GrowingToolSet is a ToolSet that gains tools after start-up (a host
// adapter's tools.register after create()). Added lists those names in
// registration order; it only grows.
type GrowingToolSet interface {
	ToolSet
	Added() []string
}

// adoptLateTools takes up, without a patch, the late tools that exist when
// the session is built (they are in its first system prompt like any
// other).
func (st *state) adoptLateTools() {
	g, ok := st.s.deps.Tools.(GrowingToolSet)
	if !ok {
		return
	}
	st.lateSeen = map[string]bool{}
	for _, n := range g.Added() {
		st.lateSeen[n] = true
		if st.activeTools != nil {
			st.activeTools[n] = true
		}
	}
}

// refreshTools takes up the late tools registered since the last request:
// active, appended to the tool table, declared by a system patch. Child
// sessions keep the tool set they were given.
func (st *state) refreshTools() {
	g, ok := st.s.deps.Tools.(GrowingToolSet)
	if !ok || st.s.parent {
		return
	}
	if st.lateSeen == nil {
		st.lateSeen = map[string]bool{}
	}
	var added []string
	for _, n := range g.Added() {
		if !st.lateSeen[n] {
			st.lateSeen[n] = true
			added = append(added, n)
		}
	}
	if len(added) == 0 {
		return
	}
	st.lateTools = append(st.lateTools, added...)
	for _, n := range added {
		if st.activeTools != nil {
			st.activeTools[n] = true
		}
	}
	var decls []llm.ToolDecl
	for _, d := range st.activeDecls() {
		for _, n := range added {
			if d.Name == n {
				decls = append(decls, d)
			}
		}
	}
	if len(decls) == 0 || st.tree.Len() == 0 {
		return
	}
	sec, cur := st.systemSections(), st.context().sections
	patch := &llm.SystemMessage{Role: llm.RoleSystem, Sections: llm.Sections{Tools: sec.Tools}, Timestamp: st.nowMs(), ToolsAdded: decls}
	if sec.Rules != nil && (cur.Rules == nil || *cur.Rules != *sec.Rules) {
		patch.Sections.Rules = sec.Rules // the new tools' promptGuidelines
	}
	st.appendEntry(store.MessageEntry(patch))
}

// refreshHost re-renders the host section before a prompt and records a
// patch when the text changed (instructions added after create()).
// Sources are never removed, so the section never goes away.
func (st *state) refreshHost() {
	h := st.s.deps.Host
	if h == nil || st.s.parent || st.tree.Len() == 0 {
		return
	}
	text := h.Instructions()
	if cur := st.context().sections.Host; text == "" || (cur != nil && *cur == text) {
		return
	}
	st.appendEntry(store.MessageEntry(&llm.SystemMessage{Role: llm.RoleSystem, Timestamp: st.nowMs(), Sections: llm.Sections{Host: &text}}))
}

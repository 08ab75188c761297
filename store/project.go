package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// ModelRef is a model choice restored from a model_change entry.
type ModelRef struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	Channel  string `json:"channel,omitempty"`
}

// SystemState is the effective system prompt after replaying system
// messages: the first is complete, later ones are patches (a section
// present in a patch replaces the old one, a null section deletes it;
// toolsRemoved are dropped, then toolsAdded are added or moved to the end).
type SystemState struct {
	Sections llm.Sections
	Tools    []llm.ToolDecl
}

// ProjectionInfo is what Project knows besides the messages.
type ProjectionInfo struct {
	// Entries[i] is the entry msgs[i] came from; for the system checkpoint
	// that a compaction inserts, it is the compaction entry.
	Entries []*Entry
	// Compaction is the latest compaction entry on the branch (nil if none).
	Compaction *Entry
	// Model and ThinkingLevel are the latest model_change and
	// thinking_level_change on the branch (nil / "" if none).
	Model         *ModelRef
	ThinkingLevel string
	// System is the system prompt the projected messages amount to: the
	// replay of their system messages, with null sections honoured (which
	// llm.SystemMessage cannot express). Nil when there is none.
	System *SystemState
}

// Project computes the model context of a branch (root → leaf), per §5.5:
//
//   - With a compaction on the branch, the latest one wins: the context is
//     a system checkpoint (the replay of every system message before the
//     compaction, if any), the compaction summary, the non-system entries
//     from firstKeptEntryId up to the compaction, and everything after it.
//   - The latest context_edit per target on the branch applies: a null
//     replacement removes the message; a string replaces its content
//     (user and custom messages get string content, assistant and
//     toolResult messages one text block, summaries their summary; system
//     messages are left alone).
//   - message entries give their message; custom_message entries an
//     llm.CustomMessage, compaction an llm.CompactionSummary, branch_summary
//     an llm.BranchSummary (timestamps: the entry time in epoch ms); every
//     other type is skipped.
//
// Messages come from the entries' caches and must not be modified; edited
// messages are copies. An entry whose body cannot be decoded is an error
// wrapping ErrMalformedEntry.
func Project(branch []*Entry) ([]llm.Message, ProjectionInfo, error) {
	var info ProjectionInfo
	type edit struct {
		remove bool
		text   string
	}
	edits := map[string]edit{}
	at := -1
	for i, e := range branch {
		switch e.Type {
		case TypeContextEdit:
			target, ok := objectString(e.Body, "targetId")
			if !ok {
				continue
			}
			repl := objectField(e.Body, "replacement")
			switch {
			case len(repl) > 0 && repl[0] == 'n':
				edits[target] = edit{remove: true}
			case len(repl) > 0 && repl[0] == '"':
				edits[target] = edit{text: unquote(repl)}
			}
		case TypeModelChange:
			var m struct {
				Provider string `json:"provider"`
				ModelID  string `json:"modelId"`
				Channel  string `json:"channel"`
			}
			if err := json.Unmarshal(e.Body, &m); err != nil {
				return nil, info, malformed(e, err)
			}
			info.Model = &ModelRef{Provider: m.Provider, ID: m.ModelID, Channel: m.Channel}
		case TypeThinkingLevelChange:
			info.ThinkingLevel, _ = objectString(e.Body, "thinkingLevel")
		case TypeCompaction:
			at = i
		}
	}

	var msgs []llm.Message
	var sys *SystemState
	ctxEntries := branch
	if at >= 0 {
		comp := branch[at]
		info.Compaction = comp
		for _, e := range branch[:at] {
			if isSystemEntry(e) {
				if err := applySystem(&sys, e); err != nil {
					return nil, info, err
				}
			}
		}
		if sys != nil {
			cp := &llm.SystemMessage{
				Role: llm.RoleSystem, Sections: sys.Sections,
				Timestamp: epochMs(comp.Timestamp), ToolsAdded: slices.Clone(sys.Tools),
			}
			msgs = append(msgs, cp)
			info.Entries = append(info.Entries, comp)
		}
		first, _ := objectString(comp.Body, "firstKeptEntryId")
		ctxEntries = []*Entry{comp}
		if k := slices.IndexFunc(branch, func(e *Entry) bool { return e.ID == first }); k >= 0 && k < at {
			for _, e := range branch[k:at] {
				if !isSystemEntry(e) {
					ctxEntries = append(ctxEntries, e)
				}
			}
		}
		ctxEntries = append(ctxEntries, branch[at+1:]...)
	}

	for _, e := range ctxEntries {
		m, ok, err := e.contextMessage()
		if err != nil {
			return nil, info, err
		}
		if !ok {
			continue
		}
		if ed, ok := edits[e.ID]; ok {
			if ed.remove {
				continue
			}
			m = withText(m, ed.text)
		}
		if m.MessageRole() == llm.RoleSystem && e.Type == TypeMessage {
			if err := applySystem(&sys, e); err != nil {
				return nil, info, err
			}
		}
		msgs = append(msgs, m)
		info.Entries = append(info.Entries, e)
	}
	info.System = sys
	return msgs, info, nil
}

func malformed(e *Entry, err error) error {
	return fmt.Errorf("%w: %s entry %s: %w", ErrMalformedEntry, e.Type, e.ID, err)
}

// isSystemEntry reports whether e is a system message, without decoding it.
func isSystemEntry(e *Entry) bool {
	if e.Type != TypeMessage {
		return false
	}
	role, _ := objectString(objectField(e.Body, "message"), "role")
	return role == llm.RoleSystem
}

// epochMs converts an ISO timestamp to epoch milliseconds (0 if invalid),
// like Date.parse in the reference.
func epochMs(iso string) int64 {
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// withText returns a copy of m whose content is replaced by text.
func withText(m llm.Message, text string) llm.Message {
	switch m := m.(type) {
	case *llm.UserMessage:
		c := *m
		c.Content = llm.StringContent(text)
		return &c
	case *llm.CustomMessage:
		c := *m
		c.Content = llm.StringContent(text)
		return &c
	case *llm.AssistantMessage:
		c := *m
		c.Content = []llm.Content{llm.Text(text)}
		return &c
	case *llm.ToolResultMessage:
		c := *m
		c.Content = []llm.Content{llm.Text(text)}
		return &c
	case *llm.CompactionSummary:
		c := *m
		c.Summary = text
		return &c
	case *llm.BranchSummary:
		c := *m
		c.Summary = text
		return &c
	}
	return m // system messages are not edited
}

// contextMessage returns the context message of e, decoded once and
// cached; ok is false for entry types that are not part of the context.
func (e *Entry) contextMessage() (llm.Message, bool, error) {
	switch e.Type {
	case TypeMessage:
		m, err := e.Message()
		if err != nil {
			return nil, false, malformed(e, err)
		}
		return m, true, nil
	case TypeCustomMessage, TypeCompaction, TypeBranchSummary:
	default:
		return nil, false, nil
	}
	e.once.Do(func() { e.msg, e.err = e.decodeContext() })
	if e.err != nil {
		return nil, false, malformed(e, e.err)
	}
	return e.msg, true, nil
}

func (e *Entry) decodeContext() (llm.Message, error) {
	ts := epochMs(e.Timestamp)
	switch e.Type {
	case TypeCustomMessage:
		var b struct {
			CustomType string          `json:"customType"`
			Content    llm.UserContent `json:"content"`
			Display    bool            `json:"display"`
			Details    json.RawMessage `json:"details"`
		}
		if err := json.Unmarshal(e.Body, &b); err != nil {
			return nil, err
		}
		return shareDecoded(&llm.CustomMessage{
			Role: llm.RoleCustom, CustomType: b.CustomType, Content: b.Content,
			Display: b.Display, Details: b.Details, Timestamp: ts,
		}, e.Body), nil
	case TypeCompaction:
		var b struct {
			Summary      string `json:"summary"`
			TokensBefore int    `json:"tokensBefore"`
		}
		if err := json.Unmarshal(e.Body, &b); err != nil {
			return nil, err
		}
		return &llm.CompactionSummary{
			Role: llm.RoleCompactionSummary, Summary: b.Summary, TokensBefore: b.TokensBefore, Timestamp: ts,
		}, nil
	default: // TypeBranchSummary
		var b struct {
			FromID  string `json:"fromId"`
			Summary string `json:"summary"`
		}
		if err := json.Unmarshal(e.Body, &b); err != nil {
			return nil, err
		}
		return &llm.BranchSummary{Role: llm.RoleBranchSummary, Summary: b.Summary, FromID: b.FromID, Timestamp: ts}, nil
	}
}

// applySystem applies the system message of entry e to *state (creating
// it), reading the raw JSON so that null sections delete.
func applySystem(state **SystemState, e *Entry) error {
	var raw struct {
		Message struct {
			Sections     map[string]json.RawMessage `json:"sections"`
			ToolsAdded   []llm.ToolDecl             `json:"toolsAdded"`
			ToolsRemoved []string                   `json:"toolsRemoved"`
		} `json:"message"`
	}
	if err := json.Unmarshal(e.Body, &raw); err != nil {
		return malformed(e, err)
	}
	if *state == nil {
		*state = &SystemState{}
	}
	s := *state
	for name, v := range raw.Message.Sections {
		p := sectionField(&s.Sections, name)
		if p == nil || len(v) == 0 {
			continue
		}
		switch v[0] {
		case 'n':
			*p = nil
		case '"':
			text := unquote(v)
			*p = &text
		}
	}
	m := raw.Message
	if len(m.ToolsRemoved) > 0 || len(m.ToolsAdded) > 0 {
		tools := slices.Clone(s.Tools) // never alias a checkpoint already handed out
		for _, name := range m.ToolsRemoved {
			tools = slices.DeleteFunc(tools, func(t llm.ToolDecl) bool { return t.Name == name })
		}
		for _, t := range m.ToolsAdded {
			tools = slices.DeleteFunc(tools, func(o llm.ToolDecl) bool { return o.Name == t.Name })
			tools = append(tools, t)
		}
		s.Tools = tools
	}
	return nil
}

// sectionField maps a section name to its field in s (nil if unknown).
func sectionField(s *llm.Sections, name string) **string {
	switch name {
	case "preamble":
		return &s.Preamble
	case "tools":
		return &s.Tools
	case "rules":
		return &s.Rules
	case "project_context":
		return &s.ProjectContext
	case "skills":
		return &s.Skills
	case "memory":
		return &s.Memory
	case "hooks":
		return &s.Hooks
	case "cwd":
		return &s.Cwd
	case "host":
		return &s.Host
	case "role":
		return &s.Role
	}
	return nil
}

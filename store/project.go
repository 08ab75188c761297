package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/armadra/ama-rpc/internal/jsonobj"
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
// wrapping ErrMalformedEntry. Project is NewProjection followed by every
// Message.
func Project(branch []*Entry) ([]llm.Message, ProjectionInfo, error) {
	p, err := NewProjection(branch)
	if err != nil {
		return nil, p.Info, err
	}
	msgs := make([]llm.Message, 0, p.Len())
	for i := range p.Len() {
		m, err := p.Message(i)
		if err != nil {
			return nil, p.Info, err
		}
		msgs = append(msgs, m)
	}
	return msgs, p.Info, nil
}

// Projection is the projection of a branch (see Project) planned without
// decoding messages: which entries give the context messages, in order,
// which of them are system messages, and the edits that apply. Only the
// system messages (for Info.System) and the latest model_change are
// decoded; a message is decoded when Message asks for it (and cached in
// its entry). Append extends a projection by one more entry of the same
// branch, so a session projects its branch once and keeps it.
//
// A Projection is not safe for concurrent use; it belongs to the session's
// owner goroutine, like the Tree.
type Projection struct {
	// Info.Entries[i] is the entry message i comes from.
	Info ProjectionInfo

	checkpoint llm.Message    // message 0 when a compaction has a system checkpoint
	system     []bool         // system[i]: message i is a system message
	texts      map[int]string // edited messages: replacement text by index
	edits      map[string]contextEdit
	fresh      int    // first message recorded after the latest compaction
	last       *Entry // the branch's last entry (nil: empty branch)
}

type contextEdit struct {
	remove bool
	text   string
}

// NewProjection plans the projection of branch (root → leaf). With a
// compaction on the branch projection starts at the compaction: only the
// entries the context keeps are read, apart from the entry types on the way
// back to the latest model and thinking-level changes and a prefix check of
// the earlier entries for system messages (the system checkpoint, which
// decodes only those). An error wraps ErrMalformedEntry (a
// system message or the latest model_change that cannot be decoded); the
// returned projection is then empty.
func NewProjection(branch []*Entry) (*Projection, error) {
	p := &Projection{edits: map[string]contextEdit{}}
	if len(branch) > 0 {
		p.last = branch[len(branch)-1]
	}
	// Backwards from the leaf: the latest compaction, model_change and
	// thinking_level_change.
	at, model, thinking := -1, -1, -1
	for i := len(branch) - 1; i >= 0 && (at < 0 || model < 0 || thinking < 0); i-- {
		switch branch[i].Type {
		case TypeModelChange:
			if model < 0 {
				model = i
			}
		case TypeThinkingLevelChange:
			if thinking < 0 {
				thinking = i
			}
		case TypeCompaction:
			if at < 0 {
				at = i
			}
		}
	}
	// The context starts at the first kept entry of the compaction (at the
	// compaction when it keeps nothing before it), and so do the edits
	// that matter: an edit follows its target on every branch, so one
	// before that point targets an entry the context does not hold.
	from, kept := 0, -1
	if at >= 0 {
		from = at
		first, _ := jsonobj.StringField(branch[at].Body(), "firstKeptEntryId")
		for k := at - 1; k >= 0; k-- {
			if branch[k].ID == first {
				from, kept = k, k
				break
			}
		}
	}
	for _, e := range branch[from:] {
		if e.Type != TypeContextEdit {
			continue
		}
		target, ok := jsonobj.StringField(e.Body(), "targetId")
		if !ok {
			continue
		}
		repl := jsonobj.Field(e.Body(), "replacement")
		switch {
		case len(repl) > 0 && repl[0] == 'n':
			p.edits[target] = contextEdit{remove: true}
		case len(repl) > 0 && repl[0] == '"':
			p.edits[target] = contextEdit{text: jsonobj.Unquote(repl)}
		}
	}
	if model >= 0 {
		ref, err := decodeModel(branch[model])
		if err != nil {
			return &Projection{}, err
		}
		p.Info.Model = ref
	}
	if thinking >= 0 {
		p.Info.ThinkingLevel, _ = jsonobj.StringField(branch[thinking].Body(), "thinkingLevel")
	}

	ctxEntries := branch
	after := 0 // index in ctxEntries of the first entry after the compaction
	if at >= 0 {
		comp := branch[at]
		p.Info.Compaction = comp
		for _, e := range branch[:at] {
			if isSystemEntry(e) {
				if err := applySystem(&p.Info.System, e); err != nil {
					return &Projection{}, err
				}
			}
		}
		if sys := p.Info.System; sys != nil {
			p.checkpoint = &llm.SystemMessage{
				Role: llm.RoleSystem, Sections: sys.Sections,
				Timestamp: epochMs(comp.Timestamp), ToolsAdded: slices.Clone(sys.Tools),
			}
		}
		ctxEntries = []*Entry{comp}
		if kept >= 0 {
			for _, e := range branch[kept:at] {
				if !isSystemEntry(e) {
					ctxEntries = append(ctxEntries, e)
				}
			}
		}
		after = len(ctxEntries)
		ctxEntries = append(ctxEntries, branch[at+1:]...)
	}
	p.Info.Entries = make([]*Entry, 0, len(ctxEntries)+1) // at most one message per entry, plus the checkpoint
	p.system = make([]bool, 0, len(ctxEntries)+1)
	if p.checkpoint != nil {
		p.add(p.Info.Compaction, true)
	}
	for k, e := range ctxEntries {
		if k == after {
			p.fresh = len(p.Info.Entries)
		}
		if err := p.entry(e); err != nil {
			return &Projection{}, err
		}
	}
	if after >= len(ctxEntries) {
		p.fresh = len(p.Info.Entries)
	}
	return p, nil
}

// entry adds the message of a context entry, if it gives one.
func (p *Projection) entry(e *Entry) error {
	switch e.Type {
	case TypeMessage, TypeCustomMessage, TypeCompaction, TypeBranchSummary:
	default:
		return nil
	}
	ed, edited := p.edits[e.ID]
	if edited && ed.remove {
		return nil
	}
	sys := e.Type == TypeMessage && isSystemEntry(e)
	if sys {
		if err := applySystem(&p.Info.System, e); err != nil {
			return err
		}
	}
	i := p.add(e, sys)
	if edited && !sys { // system messages are not edited
		if p.texts == nil {
			p.texts = map[int]string{}
		}
		p.texts[i] = ed.text
	}
	return nil
}

func (p *Projection) add(e *Entry, system bool) int {
	p.Info.Entries = append(p.Info.Entries, e)
	p.system = append(p.system, system)
	return len(p.Info.Entries) - 1
}

// Len returns the number of context messages.
func (p *Projection) Len() int { return len(p.Info.Entries) }

// IsSystem reports whether message i is a system message (the checkpoint
// of a compaction or a system message entry), without decoding it.
func (p *Projection) IsSystem(i int) bool { return p.system[i] }

// Fresh returns the index of the first message recorded after the latest
// compaction (Len when there is none yet; 0 without a compaction): usage
// reported before it describes a context that no longer exists.
func (p *Projection) Fresh() int { return p.fresh }

// Message returns message i, decoding its entry on first use. Edited
// messages are copies; the others come from the entries' caches and must
// not be modified.
func (p *Projection) Message(i int) (llm.Message, error) {
	if i == 0 && p.checkpoint != nil {
		return p.checkpoint, nil
	}
	m, _, err := p.Info.Entries[i].contextMessage()
	if err != nil {
		return nil, err
	}
	if text, ok := p.texts[i]; ok {
		m = withText(m, text)
	}
	return m, nil
}

// Append extends the projection by e, the child of the branch's last
// entry, and reports whether it could: a compaction, a context_edit, a
// system message, a model_change that cannot be decoded, or an entry that
// is not the last entry's child can change more than the end of the
// context, and then the caller projects the new branch afresh
// (NewProjection). On false the projection is unchanged.
func (p *Projection) Append(e *Entry) bool {
	if p.last == nil {
		if e.ParentID != nil {
			return false
		}
	} else if e.ParentID == nil || *e.ParentID != p.last.ID {
		return false
	}
	switch e.Type {
	case TypeCompaction, TypeContextEdit:
		return false
	case TypeModelChange:
		ref, err := decodeModel(e)
		if err != nil {
			return false
		}
		p.Info.Model = ref
	case TypeThinkingLevelChange:
		p.Info.ThinkingLevel, _ = jsonobj.StringField(e.Body(), "thinkingLevel")
	case TypeMessage, TypeCustomMessage, TypeBranchSummary:
		if _, edited := p.edits[e.ID]; edited || (e.Type == TypeMessage && isSystemEntry(e)) {
			return false
		}
		p.add(e, false)
	}
	p.last = e
	return true
}

// Last returns the branch's last entry (nil for an empty branch).
func (p *Projection) Last() *Entry { return p.last }

// BranchSettings returns the latest model_change and thinking_level_change
// of branch (nil / "" if none), reading only those two entries: what a
// resume restores, without projecting the messages.
func BranchSettings(branch []*Entry) (*ModelRef, string, error) {
	var model, level *Entry
	for i := len(branch) - 1; i >= 0 && (model == nil || level == nil); i-- {
		switch e := branch[i]; {
		case e.Type == TypeModelChange && model == nil:
			model = e
		case e.Type == TypeThinkingLevelChange && level == nil:
			level = e
		}
	}
	return EntrySettings(model, level)
}

// EntrySettings reads the model of a model_change entry and the level of a
// thinking_level_change entry (nil: none), as BranchSettings does for the
// latest of each on a branch; a caller walking the branch anyway (a
// session's restore) finds them itself.
func EntrySettings(model, level *Entry) (*ModelRef, string, error) {
	var ref *ModelRef
	if model != nil {
		var err error
		if ref, err = decodeModel(model); err != nil {
			return nil, "", err
		}
	}
	var lv string
	if level != nil {
		lv, _ = jsonobj.StringField(level.Body(), "thinkingLevel")
	}
	return ref, lv, nil
}

// decodeModel reads the model of a model_change entry: its members as
// this package writes them (the three keys spelt so, string values) from
// the body's members (jsonobj.Members); anything else (another spelling
// encoding/json would match, a value not a string) as encoding/json
// decodes it, errors included.
func decodeModel(e *Entry) (*ModelRef, error) {
	ref, plain := &ModelRef{}, true
	jsonobj.Members(e.Body(), func(key string, val []byte) {
		var dst *string
		switch key {
		case "provider":
			dst = &ref.Provider
		case "modelId":
			dst = &ref.ID
		case "channel":
			dst = &ref.Channel
		default:
			if strings.EqualFold(key, "provider") || strings.EqualFold(key, "modelId") || strings.EqualFold(key, "channel") {
				plain = false
			}
			return
		}
		if len(val) == 0 || val[0] != '"' {
			plain = false
			return
		}
		*dst = jsonobj.Unquote(val)
	})
	if plain {
		return ref, nil
	}
	return decodeModelJSON(e)
}

// decodeModelJSON is decodeModel by encoding/json.
func decodeModelJSON(e *Entry) (*ModelRef, error) {
	var m struct {
		Provider string `json:"provider"`
		ModelID  string `json:"modelId"`
		Channel  string `json:"channel"`
	}
	if err := json.Unmarshal(e.Body(), &m); err != nil {
		return nil, malformed(e, err)
	}
	return &ModelRef{Provider: m.Provider, ID: m.ModelID, Channel: m.Channel}, nil
}

func malformed(e *Entry, err error) error {
	return fmt.Errorf("%w: %s entry %s: %w", ErrMalformedEntry, e.Type, e.ID, err)
}

// isSystemEntry reports whether e is a system message, without decoding it.
//
// Bodies written by this package (and by ama) start with
// {"message":{"role":"…", so the role is read from there without
// scanning the body; anything else (whitespace, escapes, another member
// order) takes the full scan. A hand-written body that repeats the
// "message" member after such a prefix is read by its first one here.
func isSystemEntry(e *Entry) bool {
	if e.Type != TypeMessage {
		return false
	}
	if e.facts&factRole != 0 { // read at creation (Entry.learn)
		return e.facts&factSystem != 0
	}
	if role, ok := prefixString(e.Body(), rolePrefix); ok {
		return string(role) == llm.RoleSystem
	}
	role, _ := jsonobj.StringField(jsonobj.Field(e.Body(), "message"), "role")
	return role == llm.RoleSystem
}

var rolePrefix = []byte(`{"message":{"role":"`)

// prefixString returns the raw text of the string that follows prefix
// (which ends with its opening quote) at the start of body, when body has
// the prefix and the string has no escape. Otherwise ok is false and the
// caller scans the body.
func prefixString(body, prefix []byte) (raw []byte, ok bool) {
	rest, ok := bytes.CutPrefix(body, prefix)
	if !ok {
		return nil, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return nil, false
	}
	return rest[:end], true
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
	m, err := e.cached(e.decodeContext)
	if err != nil {
		return nil, false, malformed(e, err)
	}
	return m, true, nil
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
		if err := json.Unmarshal(e.Body(), &b); err != nil {
			return nil, err
		}
		return shareDecoded(&llm.CustomMessage{
			Role: llm.RoleCustom, CustomType: b.CustomType, Content: b.Content,
			Display: b.Display, Details: b.Details, Timestamp: ts,
		}, e.Body()), nil
	case TypeCompaction:
		var b struct {
			Summary      string `json:"summary"`
			TokensBefore int    `json:"tokensBefore"`
		}
		if err := json.Unmarshal(e.Body(), &b); err != nil {
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
		if err := json.Unmarshal(e.Body(), &b); err != nil {
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
	if err := json.Unmarshal(e.Body(), &raw); err != nil {
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
			text := jsonobj.Unquote(v)
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

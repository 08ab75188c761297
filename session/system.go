package session

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/llm"
)

const preamble = "You are ama, a coding agent that works in the user's project through tools. " +
	"Look before you change: read the relevant files first, keep each change focused, and check the result. Answer briefly."

const rules = "Rules:\n" +
	"- Destructive steps (rm -rf, git reset --hard, force pushes, deleting branches) need the user's explicit request; otherwise ask first.\n" +
	"- Put independent read-only tool calls in the same turn.\n" +
	"- Find code with grep or glob before reading it; never invent file paths."

// maxProjectContext bounds the project instructions copied into the prompt.
const maxProjectContext = 32 << 10

// systemSections builds the first system checkpoint of a session.
func (st *state) systemSections() llm.Sections {
	str := func(s string) *string { return &s }
	sec := llm.Sections{Preamble: str(preamble), Rules: str(rules), Cwd: str("Current working directory: " + st.cwd)}
	hints := map[string]promptHinter{}
	var guidelines []string
	for _, t := range st.allTools() {
		if h, ok := t.(promptHinter); ok && st.isActive(t.Decl().Name) {
			hints[t.Decl().Name] = h
			guidelines = append(guidelines, h.PromptGuidelines()...)
		}
	}
	if decls := st.activeDecls(); len(decls) > 0 {
		var b strings.Builder
		b.WriteString("Available tools:")
		for _, d := range decls {
			if h := hints[d.Name]; h != nil && h.PromptSnippet() != "" {
				if snip := h.PromptSnippet(); strings.HasPrefix(snip, d.Name+":") {
					fmt.Fprintf(&b, "\n- %s", snip)
				} else {
					fmt.Fprintf(&b, "\n- %s: %s", d.Name, snip)
				}
				continue
			}
			fmt.Fprintf(&b, "\n- %s: %s", d.Name, toolSummary(d))
		}
		sec.Tools = str(b.String())
	}
	if rule := replyLanguageRule(st.s.deps.Settings.ReplyLanguage); len(guidelines) > 0 || (rule != "" && !st.s.parent) {
		r := rules
		for _, g := range guidelines {
			r += "\n- " + g
		}
		if rule != "" && !st.s.parent {
			r += "\n- " + rule // a sub-agent replies to its parent, not to the user
		}
		sec.Rules = str(r)
	}
	pc, warn := projectContext(st.cwd)
	if warn != "" {
		st.s.log.Warn(warn)
	}
	for _, f := range st.s.deps.Settings.Instructions {
		data, err := ownfs.ReadUser(f, ownfs.MaxConfig)
		if err != nil {
			st.s.log.Warn("instructions file: " + err.Error())
			continue
		}
		if pc != "" {
			pc += "\n\n"
		}
		pc += "<file path=\"" + f + "\">\n" + strings.TrimSpace(string(data)) + "\n</file>"
	}
	if pc != "" {
		sec.ProjectContext = str(pc)
	}
	if sk := st.s.skillsSection(); sk != "" {
		sec.Skills = str(sk)
	}
	if h := st.s.deps.Host; h != nil {
		if text := h.Instructions(); text != "" {
			sec.Host = str(text)
		}
	}
	if st.role != "" {
		sec.Role = str(st.role)
	}
	if st.hookContext != "" {
		sec.Hooks = str(st.hookContext)
	}
	return sec
}

// replyLanguageRule is ama's rule for ui.replyLanguage (fixed English,
// whatever the interface language): "Reply to the user in <language>."
// with the value trimmed; white space inside it (a newline included) is
// one space, so the setting adds exactly one line. Blank: no rule.
func replyLanguageRule(language string) string {
	language = strings.Join(strings.Fields(language), " ")
	if language == "" {
		return ""
	}
	return "Reply to the user in " + language + "."
}

// promptHinter is implemented by tools that bring their own line of the
// tools section and bullets of the rules section (host tools).
type promptHinter interface {
	PromptSnippet() string
	PromptGuidelines() []string
}

// toolSummary is the one-line summary of a tool in the tools section: the
// first sentence of its description.
func toolSummary(d llm.ToolDecl) string {
	s := d.Description
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, '\n'); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return d.Name
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// projectContext returns the project's instruction file (AGENTS.md, else
// CLAUDE.md) from the cwd, bounded. The project is untrusted: the file is
// read through ownfs.ReadIn (a link inside the project is fine; a link out
// of it, to a credential file, or a second hard link is refused and named
// in the warning).
func projectContext(cwd string) (text, warning string) {
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		data, err := ownfs.ReadIn(cwd, name, ownfs.MaxConfig)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && warning == "" {
				warning = "project instructions skipped: " + err.Error()
			}
			continue
		}
		if len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		if len(data) > maxProjectContext {
			data = append(data[:maxProjectContext], "\n…(cut)"...)
		}
		return "Project instructions (" + name + "):\n" + strings.TrimSpace(string(data)), warning
	}
	return "", warning
}

// systemMessage is the initial system checkpoint.
func (st *state) systemMessage() *llm.SystemMessage {
	return &llm.SystemMessage{Role: llm.RoleSystem, Sections: st.systemSections(), Timestamp: st.nowMs(), ToolsAdded: st.activeDecls()}
}

package codemode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// bashResultDecl declares what tools.bash() resolves to.
const bashResultDecl = "interface BashResult { output: string; truncated: boolean; fullOutputPath?: string; exitCode: number; wallTimeMs: number }"

// builtin are the tools whose scripts get text (bash: BashResult); the
// others (host, MCP, sub-agent tools) may resolve to structured values.
var builtin = map[string]bool{tools.NameBash: true, tools.NameEdit: true, tools.NameGlob: true, tools.NameGrep: true,
	tools.NameLs: true, tools.NameRead: true, tools.NameWrite: true, "todo": true}

// declaration is one tool's TypeScript declaration: its description as
// JSDoc, then `<name>(args: <type>): Promise<R>;`. It depends only on d.
func declaration(d llm.ToolDecl) string {
	var b strings.Builder
	if desc := strings.TrimSpace(d.Description); desc != "" {
		desc = strings.ReplaceAll(desc, "*/", "*\\/")
		if strings.Contains(desc, "\n") {
			b.WriteString("/**\n")
			for _, l := range strings.Split(desc, "\n") {
				b.WriteString(" * " + l + "\n")
			}
			b.WriteString(" */\n")
		} else {
			b.WriteString("/** " + desc + " */\n")
		}
	}
	ret := "string"
	switch {
	case d.Name == tools.NameBash:
		ret = "BashResult"
	case !builtin[d.Name]:
		ret = "unknown"
	}
	fmt.Fprintf(&b, "%s(args: %s): Promise<%s>;", mangle(d.Name), tsType(d.Parameters), ret)
	return b.String()
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9_$]`)

func mangle(name string) string { return nonIdent.ReplaceAllString(name, "_") }

var ident = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// schema is the part of JSON Schema the declarations read; properties keep
// their order.
type schema struct {
	Type        any             `json:"type"`
	Enum        []any           `json:"enum"`
	Items       json.RawMessage `json:"items"`
	Properties  json.RawMessage `json:"properties"`
	Required    []string        `json:"required"`
	Description string          `json:"description"`
}

// tsType maps a JSON Schema to a TypeScript type.
func tsType(raw json.RawMessage) string {
	var s schema
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &s) != nil {
		return "unknown"
	}
	if len(s.Enum) > 0 {
		parts := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			b, _ := json.Marshal(v)
			parts[i] = string(b)
		}
		return strings.Join(parts, " | ")
	}
	typ, _ := s.Type.(string)
	switch typ {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "array":
		t := tsType(s.Items)
		if strings.Contains(t, " | ") {
			t = "(" + t + ")"
		}
		return t + "[]"
	case "object":
		keys, vals := orderedMembers(s.Properties)
		if len(keys) == 0 {
			return "Record<string, unknown>"
		}
		req := map[string]bool{}
		for _, r := range s.Required {
			req[r] = true
		}
		var b strings.Builder
		b.WriteString("{ ")
		for i, k := range keys {
			var ps schema
			_ = json.Unmarshal(vals[i], &ps)
			if d := strings.TrimSpace(ps.Description); d != "" {
				b.WriteString("/** " + strings.ReplaceAll(strings.ReplaceAll(d, "*/", "*\\/"), "\n", " ") + " */ ")
			}
			name := k
			if !ident.MatchString(k) {
				q, _ := json.Marshal(k)
				name = string(q)
			}
			opt := "?"
			if req[k] {
				opt = ""
			}
			b.WriteString(name + opt + ": " + tsType(vals[i]) + "; ")
		}
		b.WriteString("}")
		return b.String()
	}
	return "unknown"
}

// orderedMembers lists an object's members in document order.
func orderedMembers(raw json.RawMessage) ([]string, []json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys, vals
		}
		k, _ := t.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return keys, vals
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return keys, vals
}

// declBlock is the `only` layout's declarations: BashResult when bash is
// callable, then `declare const tools` with the declarations by name while
// they fit budget (estimated tokens, ceil(chars/4)); the rest are named
// in a trailing comment.
func declBlock(decls []llm.ToolDecl, budget int) string {
	sorted := append([]llm.ToolDecl(nil), decls...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b strings.Builder
	for _, d := range sorted {
		if d.Name == tools.NameBash {
			b.WriteString(bashResultDecl + "\n")
			break
		}
	}
	b.WriteString("declare const tools: {\n")
	var rest []string
	used := 0
	for _, d := range sorted {
		decl := declaration(d)
		cost := (len(decl) + 3) / 4
		if rest != nil || used+cost > budget {
			rest = append(rest, d.Name)
			continue
		}
		used += cost
		for _, l := range strings.Split(decl, "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("};")
	if rest != nil {
		b.WriteString("\n// Also callable (use describeTool(name) for the signature): " + strings.Join(rest, ", "))
	}
	return b.String()
}

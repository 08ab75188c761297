package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Break is one change of the schema that can break a host: a removed
// definition, member or enum value (a rename is a removal and an
// addition), a member that became required, or a member whose type lost a
// JSON type. Subject names what changed ("agent_end.willRetry",
// "response.code busy"); a Changes section must name it.
type Break struct {
	Subject string
	What    string
}

func (b Break) String() string { return b.Subject + ": " + b.What }

// Breaking compares the old document with the new one and returns the
// changes of the stable definitions (x-stability stable in old) that can
// break a host, sorted. Additions (definitions, members, enum values,
// relaxed requirements) are not breaks. Unions are compared through their
// discriminating enum (a removed command or event is a removed enum
// value); allOf/anyOf/oneOf branches are not compared one by one, since
// the definitions they refer to are compared by name.
func Breaking(old, cur *jsonschema.Schema) []Break {
	var out []Break
	for _, name := range slices.Sorted(maps.Keys(old.Defs)) {
		o := old.Defs[name]
		if o.Extra["x-stability"] != string(Stable) {
			continue
		}
		n, ok := cur.Defs[name]
		if !ok {
			out = append(out, Break{name, "definition removed"})
			continue
		}
		compareSchema(name, o, n, cur.Defs, &out)
	}
	slices.SortFunc(out, func(a, b Break) int { return strings.Compare(a.String(), b.String()) })
	return out
}

func compareSchema(at string, o, n *jsonschema.Schema, defs map[string]*jsonschema.Schema, out *[]Break) {
	if o == nil || n == nil {
		return
	}

	if o.Ref != "" && n.Ref != "" && o.Ref != n.Ref {
		*out = append(*out, Break{at, fmt.Sprintf("refers to %s instead of %s", n.Ref, o.Ref)})
	}
	if ot, nt := types(o), types(n); len(ot) > 0 && len(nt) > 0 {
		for _, t := range ot {
			if !slices.Contains(nt, t) && !(t == "integer" && slices.Contains(nt, "number")) {
				*out = append(*out, Break{at, fmt.Sprintf("type %s no longer allowed (now %v)", t, nt)})
			}
		}
	}
	if o.Const != nil && (n.Const == nil || !sameJSON(*o.Const, *n.Const)) && n.Enum == nil {
		*out = append(*out, Break{at, fmt.Sprintf("constant %s changed", jsonText(*o.Const))})
	}
	if len(o.Enum) > 0 && (n.Enum != nil || n.Const != nil) {
		for _, v := range o.Enum {
			in := slices.ContainsFunc(n.Enum, func(w any) bool { return sameJSON(v, w) }) || n.Const != nil && sameJSON(v, *n.Const)
			if !in {
				*out = append(*out, Break{at + " " + jsonText(v), "enum value removed"})
			}
		}
	}
	if o.Ref == "" && n.Ref != "" && len(n.Properties) == 0 {
		// What was written inline now refers to a definition (compared by
		// name too): its members are the definition's.
		if d, ok := defs[strings.TrimPrefix(n.Ref, "#/$defs/")]; ok && d.Ref == "" {
			n = d
		}
	}
	for _, p := range slices.Sorted(maps.Keys(o.Properties)) {
		np, ok := n.Properties[p]
		if !ok {
			*out = append(*out, Break{at + "." + p, "member removed (or renamed)"})
			continue
		}
		compareSchema(at+"."+p, o.Properties[p], np, defs, out)
	}
	for _, r := range n.Required {
		if !slices.Contains(o.Required, r) {
			if _, existed := o.Properties[r]; existed {
				*out = append(*out, Break{at + "." + r, "optional member made required"})
			}
		}
	}
	compareSchema(at+"[]", o.Items, n.Items, defs, out)
	compareSchema(at+"{}", o.AdditionalProperties, n.AdditionalProperties, defs, out)
}

func types(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func sameJSON(a, b any) bool { return jsonText(a) == jsonText(b) }

// Version returns the document's x-protocolVersion (0 when absent).
func Version(s *jsonschema.Schema) int {
	switch v := s.Extra["x-protocolVersion"].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
}

// Gate is the schema-diff check: breaking changes from old to cur pass
// only when the protocol version changed and changes (the text of the
// docs' Changes section) has a part for the new version
// ("protocol version N") that names every break's subject. It returns one
// error text per unmet condition, empty when the change may go in.
func Gate(old, cur *jsonschema.Schema, changes string) []string {
	breaks := Breaking(old, cur)
	if len(breaks) == 0 {
		return nil
	}
	ov, nv := Version(old), Version(cur)
	var out []string
	if ov == nv {
		for _, b := range breaks {
			out = append(out, fmt.Sprintf("%s (a breaking change at protocol version %d: bump rpc.ProtocolVersion and name it under \"Protocol version %d\" in the Changes section)", b, nv, nv+1))
		}
		return out
	}
	section := versionSection(changes, nv)
	if section == "" {
		return []string{fmt.Sprintf("protocol version %d has breaking changes but the Changes section has no \"Protocol version %d\" part: %v", nv, nv, breaks)}
	}
	for _, b := range breaks {
		if !strings.Contains(section, b.Subject) {
			out = append(out, fmt.Sprintf("%s: not named in the Changes section's \"Protocol version %d\" part", b, nv))
		}
	}
	return out
}

var versionHeading = regexp.MustCompile(`(?i)protocol version (\d+)`)

// versionSection returns the lines of changes from a heading that says
// "Protocol version <v>" (any case) to the next heading.
func versionSection(changes string, v int) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(changes, "\n") {
		if strings.HasPrefix(l, "#") {
			m := versionHeading.FindStringSubmatch(l)
			in = m != nil && m[1] == strconv.Itoa(v)
			continue
		}
		if in {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/armadra/ama-rpc/llm"
)

// Tool arguments are validated with github.com/google/jsonschema-go, which
// the MCP SDK already links in and whose package initialisation is cheap
// (it compiles nothing). github.com/santhosh-tekuri/jsonschema/v6, used
// before, compiled the meta-schemas of five drafts in its own init: 1.7 MB
// in 21,000 allocations and 13-100 ms before main on every start of the
// binary (issue 37); it stays for the tests that check wire lines against
// docs/schema (rpc/schema/schemacheck), which production never links.
//
// google/jsonschema-go is the verdict (every keyword of draft-07 and
// 2020-12, local $refs) but it stops at the first failure, in an order
// that depends on map iteration, with its own texts. The model is told
// every problem, one line each, in the texts ama-rpc has always used
// ("- edits[0]: missing required property \"newText\"", pinned by
// goldens): explain walks the schema for the keywords that cover nearly
// every mistake a model makes (type, enum, const, required,
// additionalProperties, properties, items, bounds, lengths, pattern,
// local $refs). A failure the walk cannot name (anyOf, oneOf, not,
// multipleOf, uniqueItems…) is shown in the library's words.

// argSchema is one tool's compiled argument schema.
type argSchema struct {
	root     *jsonschema.Schema
	refs     map[string]*jsonschema.Schema // every $ref's target
	resolved *jsonschema.Resolved
	draft7   bool // $ref siblings are ignored
}

const draft07 = "http://json-schema.org/draft-07/schema#"

// drafts maps the $schema values ama-rpc accepts to the ones the library
// validates: draft-04 and -06 by the draft-07 rules, 2019-09 by 2020-12's
// (their differences are in keywords tool schemas hardly use; draft-04's
// boolean exclusiveMinimum does not decode, and such a schema is refused).
var drafts = map[string]string{
	"":                               "",
	"http://json-schema.org/schema#": "",
	"https://json-schema.org/schema": "",
	"http://json-schema.org/draft-04/schema#":      draft07,
	"http://json-schema.org/draft-06/schema#":      draft07,
	"http://json-schema.org/draft-07/schema#":      draft07,
	"https://json-schema.org/draft-07/schema#":     draft07,
	"https://json-schema.org/draft/2019-09/schema": "",
	"https://json-schema.org/draft/2020-12/schema": "",
}

func compileSchema(d llm.ToolDecl) (*argSchema, error) {
	params := d.Parameters
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	var root jsonschema.Schema
	if err := json.Unmarshal(params, &root); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", d.Name, err)
	}
	v, ok := drafts[root.Schema]
	if !ok {
		v, ok = drafts[root.Schema+"#"]
	}
	if !ok {
		return nil, fmt.Errorf("schema of %s: unsupported $schema %q (draft-04 to 2020-12 are)", d.Name, root.Schema)
	}
	root.Schema = v
	if err := checkTypes(&root, 0); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", d.Name, err)
	}
	refs, err := checkRefs(&root)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", d.Name, err)
	}
	rs, err := root.Resolve(&jsonschema.ResolveOptions{Loader: refuseRemote})
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", d.Name, err)
	}
	return &argSchema{root: &root, refs: refs, resolved: rs, draft7: v == draft07}, nil
}

// jsonTypes are the names "type" may use.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// checkTypes refuses a "type" no value can have anywhere in the schema:
// the library would accept the schema and then fail every call. (The
// other keywords are typed: a wrong kind of value fails the decoding.)
func checkTypes(s *jsonschema.Schema, depth int) error {
	if s == nil {
		return nil
	}
	if depth > maxSchemaDepth {
		return errors.New("schema nested too deeply")
	}
	for _, t := range typesOf(s) {
		if !slices.Contains(jsonTypes, t) {
			return fmt.Errorf("unknown type %q", t)
		}
	}
	for _, c := range subschemas(s) {
		if err := checkTypes(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// maxSchemaDepth bounds how deeply a schema may nest.
const maxSchemaDepth = 256

// subschemas returns every schema directly inside s (maps' in no order:
// the checks do not depend on it).
func subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	var subs []*jsonschema.Schema
	for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.PatternProperties, s.Defs, s.Definitions, s.DependentSchemas, s.DependencySchemas} {
		for _, c := range m {
			subs = append(subs, c)
		}
	}
	subs = append(subs, s.AdditionalProperties, s.PropertyNames, s.UnevaluatedProperties, s.Items, s.AdditionalItems,
		s.Contains, s.UnevaluatedItems, s.Not, s.If, s.Then, s.Else, s.ContentSchema)
	for _, l := range [][]*jsonschema.Schema{s.ItemsArray, s.PrefixItems, s.AllOf, s.AnyOf, s.OneOf} {
		subs = append(subs, l...)
	}
	return slices.DeleteFunc(subs, func(c *jsonschema.Schema) bool { return c == nil })
}

// inPlace returns the schemas that apply to the same value as s: its
// $ref's target and its applicators that do not step into the value.
func inPlace(s *jsonschema.Schema, ref func(string) *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, r := range []string{s.Ref, s.DynamicRef} {
		if r != "" {
			out = append(out, ref(r))
		}
	}
	out = append(out, s.Not, s.If, s.Then, s.Else)
	out = append(append(append(out, s.AllOf...), s.AnyOf...), s.OneOf...)
	for _, m := range []map[string]*jsonschema.Schema{s.DependentSchemas, s.DependencySchemas} {
		for _, c := range m {
			out = append(out, c)
		}
	}
	return slices.DeleteFunc(out, func(c *jsonschema.Schema) bool { return c == nil })
}

// checkRefs resolves every $ref the way the walk does and refuses a
// schema whose references loop without a step into the value ({"$ref":"#"},
// or two definitions naming each other): the library would recurse until
// the stack overflows, which ends the process. Only references inside the
// document by JSON pointer or anchor are supported ("#/$defs/x", "#a").
func checkRefs(root *jsonschema.Schema) (map[string]*jsonschema.Schema, error) {
	var all []*jsonschema.Schema
	var collect func(s *jsonschema.Schema)
	collect = func(s *jsonschema.Schema) {
		all = append(all, s)
		for _, c := range subschemas(s) {
			collect(c)
		}
	}
	collect(root)
	var bad error
	refs := map[string]*jsonschema.Schema{}
	ref := func(r string) *jsonschema.Schema {
		t, err := resolveLocal(root, all, r)
		if err != nil && bad == nil {
			bad = err
		}
		refs[r] = t
		return t
	}
	const (
		unseen = iota
		open
		done
	)
	state := map[*jsonschema.Schema]int{}
	var visit func(s *jsonschema.Schema) error
	visit = func(s *jsonschema.Schema) error {
		switch state[s] {
		case open:
			return errors.New("its references loop without a step into the value")
		case done:
			return nil
		}
		state[s] = open
		for _, n := range inPlace(s, ref) {
			if err := visit(n); err != nil {
				return err
			}
		}
		state[s] = done
		return nil
	}
	for _, s := range all {
		if err := visit(s); err != nil {
			return nil, err
		}
		if bad != nil {
			return nil, bad
		}
	}
	return refs, nil
}

// resolveLocal finds the schema a reference inside the document names:
// "#" (the root), a JSON pointer "#/…" or an anchor "#name".
func resolveLocal(root *jsonschema.Schema, all []*jsonschema.Schema, ref string) (*jsonschema.Schema, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q: only references inside the schema (#…) are supported", ref)
	}
	if un, err := url.PathUnescape(frag); err == nil {
		frag = un
	}
	if frag == "" {
		return root, nil
	}
	if !strings.HasPrefix(frag, "/") {
		for _, s := range all {
			if s.Anchor == frag || s.DynamicAnchor == frag {
				return s, nil
			}
		}
		return nil, fmt.Errorf("$ref %q: no such anchor", ref)
	}
	s := root
	segs := strings.Split(frag[1:], "/")
	for i := 0; i < len(segs); i++ {
		seg := pointerToken(segs[i])
		next := func() (string, bool) {
			if i+1 >= len(segs) {
				return "", false
			}
			i++
			return pointerToken(segs[i]), true
		}
		var t *jsonschema.Schema
		switch seg {
		case "$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies":
			m := map[string]map[string]*jsonschema.Schema{"$defs": s.Defs, "definitions": s.Definitions, "properties": s.Properties,
				"patternProperties": s.PatternProperties, "dependentSchemas": s.DependentSchemas, "dependencies": s.DependencySchemas}[seg]
			if k, ok := next(); ok {
				t = m[k]
			}
		case "allOf", "anyOf", "oneOf", "prefixItems", "items":
			l := map[string][]*jsonschema.Schema{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf, "prefixItems": s.PrefixItems, "items": s.ItemsArray}[seg]
			if seg == "items" && s.Items != nil {
				t = s.Items
				break
			}
			if k, ok := next(); ok {
				if n, err := strconv.Atoi(k); err == nil && n >= 0 && n < len(l) {
					t = l[n]
				}
			}
		default:
			t = map[string]*jsonschema.Schema{"not": s.Not, "if": s.If, "then": s.Then, "else": s.Else,
				"additionalProperties": s.AdditionalProperties, "propertyNames": s.PropertyNames,
				"unevaluatedProperties": s.UnevaluatedProperties, "additionalItems": s.AdditionalItems,
				"contains": s.Contains, "unevaluatedItems": s.UnevaluatedItems, "contentSchema": s.ContentSchema}[seg]
		}
		if t == nil {
			return nil, fmt.Errorf("$ref %q: no such schema", ref)
		}
		s = t
	}
	return s, nil
}

// pointerToken decodes one reference token of a JSON pointer (RFC 6901).
func pointerToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}

// refuseRemote refuses every $ref outside the schema itself. Schemas come
// from code outside ama-rpc (host adapters, MCP servers): a $ref to
// file:///dev/zero, a FIFO or a credential file must not make ama-rpc open
// it, nor an http one make it connect.
func refuseRemote(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("schema references %s: only references inside the schema are allowed", u)
}

// validate returns nil or the problem lines.
func (s *argSchema) validate(args json.RawMessage) []string {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	if nestedDeeper(args, maxArgsDepth) {
		return []string{fmt.Sprintf("- arguments: nested deeper than %d levels", maxArgsDepth)}
	}
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return []string{"- arguments are not valid JSON: " + err.Error()}
	}
	err := s.resolved.Validate(inst)
	if err == nil {
		return nil
	}
	w := walker{refs: s.refs, draft7: s.draft7, seen: map[string]bool{}}
	w.explain(s.root, inst, nil, 0)
	if len(w.out) == 0 {
		return []string{"- " + libraryText(err)}
	}
	return w.out
}

// maxArgsDepth bounds the nesting of arguments: the validator recurses
// per level (a few KB of stack each) and a recursive schema would follow
// encoding/json's 10,000 levels.
const maxArgsDepth = 128

// nestedDeeper reports whether JSON text nests arrays and objects deeper
// than max (brackets inside strings do not count).
func nestedDeeper(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > max {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// libraryText is the library's error without the schema paths it wraps
// it in ("validating root: validating /properties/a: minimum: …").
func libraryText(err error) string {
	msg := err.Error()
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			return msg
		}
		_, after, ok := strings.Cut(rest, ": ")
		if !ok {
			return msg
		}
		msg = after
	}
}

// walker collects the problems of one instance, deduplicated, in a
// stable order: a value's type, enum and const, then an object's missing
// properties, its properties in name order, its unknown properties; an
// array's items in order.
type walker struct {
	refs   map[string]*jsonschema.Schema
	draft7 bool
	out    []string
	seen   map[string]bool
}

// maxRefHops bounds the $refs followed without descending into the
// instance ({"$ref":"#"} at the root must not loop).
const maxRefHops = 16

func (w *walker) add(loc []string, text string) {
	line := "- " + location(loc) + ": " + text
	if !w.seen[line] {
		w.seen[line] = true
		w.out = append(w.out, line)
	}
}

func (w *walker) explain(s *jsonschema.Schema, v any, loc []string, hops int) {
	if s == nil {
		return
	}
	if s.Ref != "" {
		if t := w.refs[s.Ref]; t != nil && hops < maxRefHops {
			w.explain(t, v, loc, hops+1)
		}
		if w.draft7 {
			return
		}
	}
	if s.Not != nil && reflect.ValueOf(*s.Not).IsZero() { // false
		w.add(loc, "not allowed")
		return
	}
	if want := typesOf(s); len(want) > 0 && !slices.ContainsFunc(want, func(t string) bool { return hasType(v, t) }) {
		w.add(loc, fmt.Sprintf("expected %s, got %s", strings.Join(want, " or "), typeName(v)))
		return
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return equal(e, v) }) {
		want := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			want[i] = jsonText(e)
		}
		w.add(loc, fmt.Sprintf("must be one of %s, got %s", strings.Join(want, ", "), jsonText(v)))
	}
	if s.Const != nil && !equal(*s.Const, v) {
		w.add(loc, fmt.Sprintf("must be %s, got %s", jsonText(*s.Const), jsonText(v)))
	}
	switch v := v.(type) {
	case float64:
		w.number(s, v, loc)
	case string:
		w.text(s, v, loc)
	case map[string]any:
		w.object(s, v, loc)
	case []any:
		if s.MinItems != nil && len(v) < *s.MinItems {
			w.add(loc, fmt.Sprintf("must have at least %d items, got %d", *s.MinItems, len(v)))
		}
		if s.MaxItems != nil && len(v) > *s.MaxItems {
			w.add(loc, fmt.Sprintf("must have at most %d items, got %d", *s.MaxItems, len(v)))
		}
		for i, e := range v {
			var is *jsonschema.Schema
			switch {
			case i < len(s.PrefixItems):
				is = s.PrefixItems[i]
			case i < len(s.ItemsArray):
				is = s.ItemsArray[i]
			case len(s.ItemsArray) > 0:
				is = s.AdditionalItems
			default:
				is = s.Items
			}
			w.explain(is, e, append(slices.Clip(loc), strconv.Itoa(i)), 0)
		}
	}
}

func (w *walker) number(s *jsonschema.Schema, n float64, loc []string) {
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	for _, c := range []struct {
		bound *float64
		fails func(b float64) bool
		text  string
	}{
		{s.Minimum, func(b float64) bool { return n < b }, "at least"},
		{s.ExclusiveMinimum, func(b float64) bool { return n <= b }, "greater than"},
		{s.Maximum, func(b float64) bool { return n > b }, "at most"},
		{s.ExclusiveMaximum, func(b float64) bool { return n >= b }, "less than"},
	} {
		if c.bound != nil && c.fails(*c.bound) {
			w.add(loc, fmt.Sprintf("must be %s %s, got %s", c.text, num(*c.bound), num(n)))
		}
	}
}

func (w *walker) text(s *jsonschema.Schema, str string, loc []string) {
	n := utf8.RuneCountInString(str)
	if s.MinLength != nil && n < *s.MinLength {
		w.add(loc, fmt.Sprintf("must be at least %d characters long, got %d", *s.MinLength, n))
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		w.add(loc, fmt.Sprintf("must be at most %d characters long, got %d", *s.MaxLength, n))
	}
	if s.Pattern != "" {
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(str) {
			w.add(loc, fmt.Sprintf("must match the pattern %q", s.Pattern))
		}
	}
}

func (w *walker) object(s *jsonschema.Schema, obj map[string]any, loc []string) {
	var missing []string
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			missing = append(missing, name)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		w.add(loc, fmt.Sprintf("missing required property %q", missing[0]))
	default:
		w.add(loc, "missing required properties "+quoteAll(missing))
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	var unknown []string
	for _, name := range names {
		if ps, ok := s.Properties[name]; ok {
			w.explain(ps, obj[name], append(slices.Clip(loc), name), 0)
			continue
		}
		if len(s.PatternProperties) > 0 || s.AdditionalProperties == nil {
			continue // a pattern may claim it: the library's text speaks
		}
		if a := s.AdditionalProperties; a.Not != nil && reflect.ValueOf(*a.Not).IsZero() {
			unknown = append(unknown, name)
			continue
		}
		w.explain(s.AdditionalProperties, obj[name], append(slices.Clip(loc), name), 0)
	}
	switch len(unknown) {
	case 0:
	case 1:
		w.add(loc, fmt.Sprintf("unknown property %q", unknown[0]))
	default:
		w.add(loc, "unknown properties "+quoteAll(unknown))
	}
}

func typesOf(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// hasType applies the JSON Schema type rules to a value decoded by
// encoding/json (numbers are float64; 5.0 is an integer).
func hasType(v any, t string) bool {
	switch v := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case float64:
		return t == "number" || t == "integer" && v == math.Trunc(v)
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

// typeName names a value's JSON type as the problem lines do: every number
// is a "number".
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// equal compares JSON values; the schema's values may be typed
// differently than encoding/json decodes the instance (integers).
func equal(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var an, bn any
	if json.Unmarshal(ab, &an) != nil || json.Unmarshal(bb, &bn) != nil {
		return false
	}
	return reflect.DeepEqual(an, bn)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

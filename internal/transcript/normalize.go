package transcript

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// Normalizer rewrites the run-specific parts of output lines (times, ids,
// temporary paths) into placeholders so transcripts compare across runs.
type Normalizer struct {
	// Root is the temporary directory of the run; it becomes "<root>".
	Root string
	// Style selects the rule set: "A" (whole-string ids, the prompt and
	// rewind goldens), "B" (A plus plan file names), "C" (UUID
	// substrings, backslashes; the interrupt golden) or "F" (the trace
	// golden: B after dropping numeric trace times, see dropF) or "T"
	// (the task goldens: C plus session directories and ISO times).
	Style string
	// Zero lists extra keys whose values become 0 (estimates that depend
	// on the length of temporary paths).
	Zero []string
}

var (
	uuidWhole   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	uuidAny     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	idWhole     = regexp.MustCompile(`^[0-9a-f]{8}$`)
	sessionsDir = regexp.MustCompile(`/sessions/[^/]+/`)
	isoTime     = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T[\d-]+(\.\d+)?Z?`)
	planFile    = regexp.MustCompile(`/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-v`)
)

var zeroAlways = map[string]bool{"timestamp": true, "durationMs": true}

// dropF lists the keys style F removes (not zeroes) when their value is a
// number.
var dropF = map[string]bool{
	"requestAt": true, "firstTokenAt": true, "doneAt": true, "startedAt": true, "endedAt": true, "tps": true,
	"ttftMs": true, "ttftP50": true, "ttftP90": true, "avgTps": true, "approvalMs": true,
}

// previewKey is a previews key naming an entry: <kind>:<8 hex>.
var previewKey = regexp.MustCompile(`^([^:]+):[0-9a-f]{8}$`)

// styleF applies the trace-only rules of style F to an object: numeric
// time keys are removed, sessionFile becomes "<sessionFile>" and the
// entry ids in previews keys become <id> (a repeated key keeps its first
// position and its last value, as a JavaScript object does).
func styleF(o *Object) {
	keys := o.Keys[:0]
	for _, k := range o.Keys {
		if _, num := o.Values[k].(json.Number); num && dropF[k] {
			delete(o.Values, k)
			continue
		}
		keys = append(keys, k)
	}
	o.Keys = keys
	if _, ok := o.Values["sessionFile"].(string); ok {
		o.Values["sessionFile"] = "<sessionFile>"
	}
	p, ok := o.Values["previews"].(*Object)
	if !ok {
		return
	}
	renamed := &Object{Values: map[string]Value{}}
	for _, k := range p.Keys {
		nk := previewKey.ReplaceAllString(k, "$1:<id>")
		if _, dup := renamed.Values[nk]; !dup {
			renamed.Keys = append(renamed.Keys, nk)
		}
		renamed.Values[nk] = p.Values[k]
	}
	o.Values["previews"] = renamed
}

var zeroNumeric = map[string]bool{
	"requestAt": true, "firstTokenAt": true, "doneAt": true, "startedAt": true, "endedAt": true, "tps": true,
}

// Line normalises one output line.
func (n *Normalizer) Line(line []byte) ([]byte, error) {
	v, err := Parse(line)
	if err != nil {
		return nil, err
	}
	return Encode(n.Value(v)), nil
}

// Value normalises v in place and returns it.
func (n *Normalizer) Value(v Value) Value {
	return n.walk("", v)
}

func (n *Normalizer) walk(key string, v Value) Value {
	if zeroAlways[key] || slices.Contains(n.Zero, key) {
		return json.Number("0")
	}
	switch t := v.(type) {
	case *Object:
		if n.Style == "F" {
			styleF(t)
		}
		for _, k := range t.Keys {
			t.Values[k] = n.walk(k, t.Values[k])
		}
		return t
	case []Value:
		for i := range t {
			t[i] = n.walk("", t[i])
		}
		return t
	case json.Number:
		if n.Style != "C" && zeroNumeric[key] {
			return json.Number("0")
		}
		return t
	case string:
		return n.str(key, t)
	}
	return v
}

func (n *Normalizer) str(key, s string) string {
	if n.Style == "T" { // the task goldens (background.setup.md)
		s = uuidAny.ReplaceAllString(n.root(s, true), "<uuid>")
		s = sessionsDir.ReplaceAllString(s, "/sessions/<cwd>/")
		return isoTime.ReplaceAllString(s, "<time>")
	}
	if n.Style == "C" {
		s = n.root(s, true)
		return uuidAny.ReplaceAllString(s, "<uuid>")
	}
	if key == "version" {
		return "<version>"
	}
	if uuidWhole.MatchString(s) {
		return "<uuid>"
	}
	if idWhole.MatchString(s) {
		return "<id>"
	}
	s = n.root(s, false)
	if n.Style == "B" || n.Style == "F" {
		s = planFile.ReplaceAllString(s, "/<uuid>-v")
	}
	return s
}

// root replaces the temporary root by <root> and, inside such paths (or
// everywhere with all), backslashes by slashes.
func (n *Normalizer) root(s string, all bool) string {
	if n.Root == "" {
		return s
	}
	// Session directories embed the cwd in encoded form (separators as
	// '-'), which contains the root too.
	enc := strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(strings.TrimLeft(n.Root, `/\`))
	s = strings.ReplaceAll(s, enc, "<root>")
	if all {
		return strings.ReplaceAll(strings.ReplaceAll(s, n.Root, "<root>"), `\`, "/")
	}
	return strings.ReplaceAll(s, n.Root, "<root>")
}

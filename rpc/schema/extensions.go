package schema

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/armadra/ama-rpc/printmode"
	"github.com/armadra/ama-rpc/rpc/acp"
)

// ACPDef names the definition of an ACP extension of ama-rpc: a _meta
// key's value or an extension method's params ("/" becomes ".", as a
// JSON pointer would have to escape it).
func ACPDef(name string) string { return "acp." + strings.ReplaceAll(name, "/", ".") }

// PrintLine is the definition of one stdout line of print mode's json and
// stream-json formats.
const PrintLine = "printLine"

// acpExtensions adds a definition per ACP extension (acp.Extensions): ACP
// itself has its own published schema; these are ama-rpc's additions.
func acpExtensions(defs map[string]*jsonschema.Schema, opts *jsonschema.ForOptions) error {
	for _, e := range acp.Extensions() {
		s, err := jsonschema.ForType(e.Type, opts)
		if err != nil {
			return fmt.Errorf("schema %s: %w", ACPDef(e.Name), err)
		}
		kind := "the _meta key " + e.Name
		if e.Method {
			kind = "the params of the extension method " + e.Name
		}
		s.Description = strings.TrimSpace(kind + " (" + e.Where + "). " + s.Description)
		defs[ACPDef(e.Name)] = mark(s, Experimental)
	}
	return nil
}

// printLines adds print mode's lines: the json format's result line
// (printmode.Result) and the union with the events (stream-json writes
// rpc's events; its lines have no result).
func printLines(defs map[string]*jsonschema.Schema, opts *jsonschema.ForOptions, byEvent map[string]string, order []string) error {
	r, err := infer[printmode.Result](opts)
	if err != nil {
		return fmt.Errorf("schema printResult: %w", err)
	}
	r.Properties["type"] = constant("result")
	// Entries is the session file's entries, written as they are
	// (json.RawMessage).
	r.Properties["entries"] = &jsonschema.Schema{Type: "array", Items: ref("sessionEntry"),
		Description: "the session's entries (raw session-file lines)"}
	defs["printResult"] = mark(r, Stable)
	by := map[string]string{"result": "printResult"}
	for k, v := range byEvent {
		by[k] = v
	}
	u := dispatch("type", by, append([]string{"result"}, order...))
	u.Description = "one stdout line of print mode (-p): --output-format json writes one result line, stream-json the run's events"
	defs[PrintLine] = mark(u, Stable)
	return nil
}

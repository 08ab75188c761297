package schema

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/armadra/ama-rpc/agents"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
)

// SessionLineDef is the definition of one line of a session file: the
// header (type "session") or an entry, by "type".
const SessionLineDef = "sessionLine"

// EntryDef names the definition of the entries of type typ.
func EntryDef(typ string) string { return "entry." + typ }

// CustomDef names the definition of the data of the custom entries whose
// customType is ct.
func CustomDef(ct string) string { return "custom." + ct }

// stableEntries are the entry types ama's own session files have (the
// format ama-rpc shares with ama); the others are ama-rpc's.
var stableEntries = []string{store.TypeMessage, store.TypeCompaction, store.TypeBranchSummary, store.TypeModelChange,
	store.TypeThinkingLevelChange, store.TypeCustom, store.TypeCustomMessage, store.TypeLabel, store.TypeSessionInfo}

// sessionFile adds the session file's definitions, from store's header
// and entry body types (store.Bodies) and the session's custom entry
// kinds (session.CustomKinds, agents.CustomKinds). replace swaps the Go type of an entry
// (EntryDef) or a custom kind (CustomDef): the tests' drifted types.
func sessionFile(defs map[string]*jsonschema.Schema, opts *jsonschema.ForOptions, replace map[string]reflect.Type) error {
	h, err := jsonschema.ForType(reflect.TypeFor[store.Header](), opts)
	if err != nil {
		return fmt.Errorf("schema sessionHeader: %w", err)
	}
	h.Description = "the first line of a session file (store.Header); timestamp and agent are always written, a file without them still opens"
	h.Properties["type"] = constant(store.HeaderType)
	h.Properties["version"] = constant(store.FormatVersion)
	h.Required = []string{"type", "version", "id", "cwd"} // what the store needs to open a file
	defs["sessionHeader"] = mark(h, Stable)
	leaf, err := jsonschema.ForType(reflect.TypeFor[store.LeafLine](), opts)
	if err != nil {
		return fmt.Errorf("schema leafLine: %w", err)
	}
	leaf.Description = "a leaf line (store.LeafLine): moves the active branch to the entry id (null: the empty branch); not an entry"
	leaf.Properties["type"] = constant(store.LeafType)
	defs["leafLine"] = mark(leaf, Stable)

	// Custom entries: data by customType, for the kinds the session
	// writes; any other customType (a host extension's, a tool's) has data
	// of its own.
	var byCustom []*jsonschema.Schema
	kinds := append(session.CustomKinds(), agents.CustomKinds()...)
	var names []string
	shapes := map[string][]*jsonschema.Schema{}
	for _, k := range kinds {
		t := k.Data
		if r, ok := replace[CustomDef(k.Type)]; ok {
			t = r
		}
		s, err := jsonschema.ForType(t, opts)
		if err != nil {
			return fmt.Errorf("schema %s: %w", CustomDef(k.Type), err)
		}
		s.Description = fmt.Sprintf("the data of a custom entry with customType %q (%s)", k.Type, t)
		if shapes[k.Type] == nil {
			names = append(names, k.Type)
		}
		shapes[k.Type] = append(shapes[k.Type], s)
	}
	for _, ct := range names {
		s := shapes[ct][0]
		if len(shapes[ct]) > 1 { // one customType, several shapes (ama.task)
			s = &jsonschema.Schema{Description: fmt.Sprintf("the data of a custom entry with customType %q: one of its shapes", ct), AnyOf: shapes[ct]}
		}
		defs[CustomDef(ct)] = mark(s, Experimental)
		byCustom = append(byCustom, &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"customType": constant(ct)}, Required: []string{"customType"}},
			Then: &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"data": ref(CustomDef(ct))}},
		})
	}

	bodies := store.Bodies()
	var order []string
	for typ := range bodies {
		order = append(order, typ)
	}
	slices.Sort(order)
	byType := map[string]string{}
	for _, typ := range order {
		t := bodies[typ]
		if r, ok := replace[EntryDef(typ)]; ok {
			t = r
		}
		s, err := jsonschema.ForType(t, opts)
		if err != nil {
			return fmt.Errorf("schema %s: %w", EntryDef(typ), err)
		}
		s.Description = fmt.Sprintf("a %s entry: type, the members of %s, then id, parentId (null for a root) and timestamp (ISO 8601)", typ, t)
		s.Properties["type"] = constant(typ)
		s.Properties["id"] = str()
		s.Properties["parentId"] = &jsonschema.Schema{Types: []string{"null", "string"}}
		s.Properties["timestamp"] = str()
		s.PropertyOrder = append(append([]string{"type"}, s.PropertyOrder...), "id", "parentId", "timestamp")
		s.Required = append(append([]string{"type"}, s.Required...), "id", "parentId", "timestamp")
		if typ == store.TypeCustom {
			s.AllOf = byCustom
		}
		st := Experimental
		if slices.Contains(stableEntries, typ) {
			st = Stable
		}
		defs[EntryDef(typ)] = mark(s, st)
		byType[typ] = EntryDef(typ)
	}
	// The envelope every entry has, and the members of its type by "type".
	entry := dispatch("type", byType, order)
	entry.Properties["id"], entry.Properties["timestamp"] = str(), str()
	entry.Properties["parentId"] = &jsonschema.Schema{Types: []string{"null", "string"}}
	entry.Required = []string{"type", "id", "parentId", "timestamp"}
	entry.Description = "a session file entry (store.Entry, custom writer): type first, the members of the type's body (store.Bodies), then id, parentId (null for a root), timestamp (ISO 8601); one of the entry types by \"type\""
	defs["sessionEntry"] = mark(entry, Stable)
	byType[store.HeaderType], byType[store.LeafType] = "sessionHeader", "leafLine"
	defs[SessionLineDef] = mark(dispatch("type", byType, append([]string{store.HeaderType, store.LeafType}, order...)), Stable)
	defs[SessionLineDef].Description = "one line of a session file: the header, then entries and leaf lines"
	return nil
}

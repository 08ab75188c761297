package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/armadra/ama-rpc/rpc"
	"github.com/armadra/ama-rpc/trace"
)

// ParamsDef and DataDef name a command's definitions: its input line and
// its success data.
func ParamsDef(command string) string { return "command." + command }

// DataDef is the definition of a command's success data.
func DataDef(command string) string { return "data." + command }

// rawMembers are the parameters a handler decodes itself (a
// json.RawMessage member, for an error naming the member): the schema of
// what the handler accepts, by JSON member name. A RawMessage member not
// listed here fails Generate, so none is left described as "any value".
var rawMembers = map[string]func() *jsonschema.Schema{
	"interrupt": func() *jsonschema.Schema { return &jsonschema.Schema{Types: []string{"null", "boolean"}} },
	"taskId":    func() *jsonschema.Schema { return &jsonschema.Schema{Types: []string{"null", "string"}} },
	"turnLimit": func() *jsonschema.Schema { return &jsonschema.Schema{Types: []string{"null", "number"}} },
}

// traceTool has trace.Tool's fields, not its identity: inferring
// trace.Tool itself would meet its override (a reference to traceTool).
type traceTool trace.Tool

var rawMessage = reflect.TypeFor[json.RawMessage]()

// commands adds one definition per command (the line: id, type and its
// parameters) and per command's data, and the "command" union by type.
// replace swaps the Go type of a command's params ("command.<name>") or
// data ("data.<name>") for tests.
func commands(defs map[string]*jsonschema.Schema, opts *jsonschema.ForOptions, replace map[string]reflect.Type) error {
	wires := rpc.CommandWires()
	byName, order := map[string]string{}, []string(nil)
	for _, name := range rpc.Commands() {
		w, ok := wires[name]
		if !ok {
			// A command added to the handlers table without its wire
			// types: described as open (rpc's TestCommandWiresComplete
			// fails until rpc.CommandWires lists it).
			defs[ParamsDef(name)] = mark(&jsonschema.Schema{Type: "object", Description: name + ": not described (rpc.CommandWires lacks it)",
				Properties: map[string]*jsonschema.Schema{"id": {Type: "string"}, "type": constant(name)}, Required: []string{"type"}}, Experimental)
			defs[DataDef(name)] = mark(&jsonschema.Schema{Description: name + ": not described (rpc.CommandWires lacks it)"}, Experimental)
			byName[name], order = ParamsDef(name), append(order, name)
			continue
		}
		params := w.Params
		if r, ok := replace[ParamsDef(name)]; ok {
			params = r
		}
		line := &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
		if params != nil {
			s, err := jsonschema.ForType(params, opts)
			if err != nil {
				return fmt.Errorf("schema %s: %w", ParamsDef(name), err)
			}
			if err := patchRaw(name, params, s); err != nil {
				return err
			}
			line = s
		}
		if line.Properties == nil {
			line.Properties = map[string]*jsonschema.Schema{}
		}
		line.Properties["id"] = &jsonschema.Schema{Type: "string", Description: "echoed in the response; at most 1024 UTF-8 bytes (rpc.MaxIDBytes)"}
		line.Properties["type"] = constant(name)
		line.PropertyOrder = append([]string{"id", "type"}, line.PropertyOrder...)
		line.Required = append([]string{"type"}, line.Required...)
		defs[ParamsDef(name)] = mark(line, stabilityOf(name))
		byName[name], order = ParamsDef(name), append(order, name)

		data := w.Data
		if r, ok := replace[DataDef(name)]; ok {
			data = []reflect.Type{r}
		}
		var alts []*jsonschema.Schema
		for _, t := range data {
			s, err := jsonschema.ForType(t, opts)
			if err != nil {
				return fmt.Errorf("schema %s: %w", DataDef(name), err)
			}
			alts = append(alts, s)
		}
		if w.Null {
			alts = append(alts, &jsonschema.Schema{Type: "null"})
		}
		d := alts[0]
		if len(alts) > 1 {
			d = &jsonschema.Schema{AnyOf: alts}
		}
		d.Description = strings.TrimSpace(d.Description + " the success data of " + name)
		defs[DataDef(name)] = mark(d, stabilityOf(name))
	}
	u := dispatch("type", byName, order)
	u.Description = "one input line (stdin): a command, its members per command (unknown members are refused by the schema; the server ignores them)"
	defs["command"] = mark(u, Stable)
	// trace.Tool's fields, its children referring back to the definition.
	tool, err := jsonschema.ForType(reflect.TypeFor[traceTool](), opts)
	if err != nil {
		return fmt.Errorf("schema traceTool: %w", err)
	}
	defs["traceTool"] = mark(tool, Experimental)
	defs["treeNode"] = mark(&jsonschema.Schema{
		Description: "a node of get_tree (store.NodesJSON writes it): the entry, its children, its label when it has one",
		Type:        "object",
		Properties: map[string]*jsonschema.Schema{
			"entry": ref("sessionEntry"), "children": {Type: "array", Items: ref("treeNode")}, "label": str(),
		},
		Required:             []string{"entry", "children"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}, Experimental)
	return nil
}

// patchRaw replaces the schema of each json.RawMessage member of params
// with its rawMembers entry.
func patchRaw(command string, params reflect.Type, s *jsonschema.Schema) error {
	for i := 0; i < params.NumField(); i++ {
		f := params.Field(i)
		if f.Type != rawMessage {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		mk, ok := rawMembers[name]
		if !ok {
			return fmt.Errorf("schema %s: member %s is decoded by hand and has no rawMembers schema", ParamsDef(command), name)
		}
		s.Properties[name] = mk()
	}
	return nil
}

// experimentalCommands are ama-rpc's own commands (not in ama's
// protocol); every other command is ama's, and stable.
var experimentalCommands = map[string]bool{
	"permission_inspect": true, "get_trace": true, "background_task": true, "get_tasks": true, "get_agents": true,
}

func stabilityOf(command string) Stability {
	if experimentalCommands[command] {
		return Experimental
	}
	return Stable
}

package tools_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/tools"
)

// FuzzArgSchema: any schema an MCP server or host adapter declares and any
// arguments a model sends either compile and validate or are refused; no
// input panics or recurses without end (a stack overflow ends the process).
func FuzzArgSchema(f *testing.F) {
	for _, s := range [][2]string{
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, `{"b":1}`},
		{`{"$defs":{"n":{"$ref":"#/$defs/m"},"m":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/n"}}}`, `{"x":"y"}`},
		{`{"anyOf":[{"type":"string"},{"$ref":"#"}]}`, `1`},
		{`{"type":"object","properties":{"c":{"$ref":"#"}}}`, `{"c":{"c":{"c":1}}}`},
		{`{"items":[{"type":"string"}],"additionalItems":false}`, `["a",1]`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/a","definitions":{"a":{"enum":[1,"x"]}}}`, `2`},
		{`{"allOf":[{"$ref":"#a"}],"$defs":{"x":{"$anchor":"a","minimum":1}}}`, `0`},
		{`{"not":{"$ref":"#/not"}}`, `{}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, schema, args string) {
		if len(schema) > 4096 || len(args) > 4096 {
			return
		}
		r, err := tools.NewRegistry(schemaTool{name: "t", schema: schema})
		if err != nil {
			return
		}
		err = r.Validate("t", json.RawMessage(args))
		var ae *tools.ArgsError
		if err != nil && (!errors.As(err, &ae) || len(ae.Problems) == 0) {
			t.Fatalf("Validate = %v", err)
		}
		if ae != nil {
			for _, p := range ae.Problems {
				if !strings.HasPrefix(p, "- ") {
					t.Fatalf("problem %q", p)
				}
			}
		}
	})
}

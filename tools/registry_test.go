package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

func TestDefaultRegistry(t *testing.T) {
	want := []string{"bash", "edit", "glob", "grep", "ls", "read", "todo", "write"}
	if diff := cmp.Diff(want, registry.Names()); diff != "" {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	perms := map[string]string{
		"bash": tools.PermExecute, "edit": tools.PermWrite, "write": tools.PermWrite,
		"glob": tools.PermRead, "grep": tools.PermRead, "ls": tools.PermRead, "read": tools.PermRead, "todo": tools.PermRead,
	}
	for _, d := range registry.Decls() {
		tool, ok := registry.Get(d.Name)
		if !ok {
			t.Fatalf("Get(%q) failed", d.Name)
		}
		if got := tool.Permission(); got != perms[d.Name] {
			t.Errorf("%s permission = %q, want %q", d.Name, got, perms[d.Name])
		}
		if d.Description == "" || strings.HasSuffix(d.Description, "\n") {
			t.Errorf("%s: bad description %q", d.Name, d.Description)
		}
		if !json.Valid(d.Parameters) {
			t.Errorf("%s: parameters are not valid JSON", d.Name)
		}
	}
	if _, ok := registry.Get("nope"); ok {
		t.Error("Get(nope) succeeded")
	}
}

func TestBashPermissionFor(t *testing.T) {
	tool, _ := registry.Get("bash")
	ap, ok := tool.(tools.ArgsPermission)
	if !ok {
		t.Fatal("bash does not implement ArgsPermission")
	}
	for args, want := range map[string]string{
		`{"job":"j1","action":"output"}`: tools.PermRead,
		`{"command":"ls"}`:               tools.PermExecute,
		`{"command":"ls","job":"j1"}`:    tools.PermExecute,
		`not json`:                       tools.PermExecute,
	} {
		if got := ap.PermissionFor(json.RawMessage(args)); got != want {
			t.Errorf("PermissionFor(%s) = %q, want %q", args, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		tool, args string
		want       []string // substrings of the problem text; nil = valid
	}{
		{"read", `{"path":"a"}`, nil},
		{"read", ``, []string{`missing required property "path"`}},
		{"read", `{"path":1}`, []string{"path: expected string, got number"}},
		{"read", `{"path":"a","offset":1.5}`, []string{"offset: expected integer, got number"}},
		{"read", `{"path":"a","extra":true}`, []string{`unknown property "extra"`}},
		{"read", `{"path":"a",`, []string{"not valid JSON"}},
		{"read", `[]`, []string{"arguments: expected object, got array"}},
		{"write", `{"path":"a"}`, []string{`missing required property "content"`}},
		{"write", `{"content":"x"}`, []string{`missing required property "path"`}},
		{"write", `{"path":"a","content":null}`, []string{"content: expected string, got null"}},
		{"edit", `{"path":"a","edits":[{"oldText":"x","newText":"y"}],"replaceAll":true}`, nil},
		{"edit", `{"path":"a","edits":[{"oldText":"x"}]}`, []string{`edits[0]: missing required property "newText"`}},
		{"edit", `{"path":"a","edits":{"oldText":"x","newText":"y"}}`, []string{"edits: expected array, got object"}},
		{"edit", `{"path":"a","edits":[{"oldText":"x","newText":"y","why":1}]}`, []string{`edits[0]: unknown property "why"`}},
		{"edit", `{"path":"a","edits":[],"replaceAll":"yes"}`, []string{"replaceAll: expected boolean, got string"}},
		{"bash", `{}`, nil},
		{"bash", `{"command":"ls","timeoutMs":5.0}`, nil},
		{"bash", `{"command":"ls","timeoutMs":"5"}`, []string{"timeoutMs: expected integer, got string"}},
		{"bash", `{"job":"j1","action":"kill"}`, []string{`action: must be one of "wait", "output", "stop", got "kill"`}},
		{"bash", `{"command":"ls","sudo":true}`, []string{`unknown property "sudo"`}},
		{"grep", `{"pattern":"x","context":2,"filesOnly":true}`, nil},
		{"grep", `{"path":"."}`, []string{`missing required property "pattern"`}},
		{"grep", `{"pattern":"x","literal":"no","limit":"3"}`, []string{"literal: expected boolean", "limit: expected integer"}},
		{"glob", `{"pattern":"**/*.go","limit":10}`, nil},
		{"glob", `{"pattern":["a"]}`, []string{"pattern: expected string, got array"}},
		{"glob", `{"pattern":"*","depth":1}`, []string{`unknown property "depth"`}},
		{"ls", `{}`, nil},
		{"ls", `{"path":"x","limit":true}`, []string{"limit: expected integer, got boolean"}},
		{"ls", `{"all":true}`, []string{`unknown property "all"`}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			err := registry.Validate(tt.tool, json.RawMessage(tt.args))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ae *tools.ArgsError
			if !errors.As(err, &ae) {
				t.Fatalf("want *ArgsError, got %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("problems %q do not mention %q", err.Error(), w)
				}
			}
			for _, p := range ae.Problems {
				if !strings.HasPrefix(p, "- ") {
					t.Errorf("problem %q does not start with \"- \"", p)
				}
			}
		})
	}
}

func TestValidateUnknownTool(t *testing.T) {
	err := registry.Validate("nope", nil)
	if !errors.Is(err, tools.ErrUnknownTool) {
		t.Fatalf("got %v, want ErrUnknownTool", err)
	}
}

func TestRunErrorTexts(t *testing.T) {
	env := newEnv(t)
	r := run(t, env, "nope", `{}`)
	if !r.IsError || text(r) != "Tool nope not found" {
		t.Errorf("unknown tool: %+v %q", r.IsError, text(r))
	}
	r = run(t, env, "read", `{"path":3,"x":1}`)
	want := "Invalid arguments for read:\n"
	if !r.IsError || !strings.HasPrefix(text(r), want) {
		t.Fatalf("invalid args: %q", text(r))
	}
	contains(t, text(r), "path: expected string", `unknown property "x"`)
}

// panicTool panics or fails on demand, to test Run's safety net.
type panicTool struct{ mode string }

func (p panicTool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: "boom", Description: "test", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (panicTool) Permission() string { return tools.PermRead }
func (p panicTool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	switch p.mode {
	case "panic":
		panic("kaboom")
	case "ctx":
		return nil, ctx.Err()
	case "big":
		return tools.TextResult(strings.Repeat("x", tools.MaxResultChars+10)), nil
	}
	return nil, errors.New("plain failure")
}

func TestRunSafetyNet(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		mode string
		ctx  context.Context
		want string
	}{
		{"panic", context.Background(), "Tool boom failed: internal error: kaboom"},
		{"ctx", ctx, "aborted by user"},
		{"err", context.Background(), "plain failure"},
	} {
		reg, err := tools.NewRegistry(panicTool{tt.mode})
		if err != nil {
			t.Fatal(err)
		}
		r := reg.Run(tt.ctx, "boom", &tools.Call{Env: env})
		mustErr(t, r, tt.want)
	}
	reg, _ := tools.NewRegistry(panicTool{"big"})
	r := reg.Run(context.Background(), "boom", &tools.Call{Env: env})
	contains(t, text(r), "[output cut", "full text saved to "+env.OutputDir)
	if n := len(text(r)); n > tools.MaxResultChars+500 {
		t.Errorf("result has %d bytes", n)
	}
}

func TestRegistryDuplicatesAndWith(t *testing.T) {
	if _, err := tools.NewRegistry(tools.ReadTool{}, tools.ReadTool{}); !errors.Is(err, tools.ErrDuplicateTool) {
		t.Fatalf("duplicate: got %v", err)
	}
	r2, err := registry.With(panicTool{"err"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r2.Names(); len(got) != 9 || got[8] != "boom" {
		t.Fatalf("With: %v", got)
	}
	if len(registry.Names()) != 8 {
		t.Fatal("With changed the original registry")
	}
	// With keeps each tool with its own schema (the built-ins' are
	// reused, not recompiled) and refuses a name it already has.
	var ae *tools.ArgsError
	if err := r2.Validate("read", json.RawMessage(`{"path":1}`)); !errors.As(err, &ae) {
		t.Fatalf("read's schema in With's registry: got %v", err)
	}
	if err := r2.Validate("write", json.RawMessage(`{"path":"a","content":"b"}`)); err != nil {
		t.Fatalf("write's schema in With's registry: %v", err)
	}
	if _, err := r2.With(tools.LsTool{}); !errors.Is(err, tools.ErrDuplicateTool) {
		t.Fatalf("With of a registered name: got %v", err)
	}
}

func TestNewRegistryBadSchema(t *testing.T) {
	bad := badSchemaTool{}
	if _, err := tools.NewRegistry(bad); err == nil {
		t.Fatal("want a schema error")
	}
}

type badSchemaTool struct{}

func (badSchemaTool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: "bad", Parameters: json.RawMessage(`{"type":"nonsense"}`)}
}
func (badSchemaTool) Permission() string { return tools.PermRead }
func (badSchemaTool) Execute(context.Context, *tools.Call) (*tools.Result, error) {
	return nil, nil
}

// A schema's $ref to a file is refused, not read (schemas come from host
// adapters and MCP servers).
func TestSchemaFileRefRefused(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "s.json")
	if err := os.WriteFile(ref, []byte(`{"type":"object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tool := schemaTool{name: "remote", schema: `{"$ref":"file://` + ref + `"}`}
	if _, err := tools.NewRegistry(tool); err == nil || !strings.Contains(err.Error(), "only references inside the schema") {
		t.Fatalf("NewRegistry = %v, want the reference refused", err)
	}
	local := schemaTool{name: "local", schema: `{"$defs":{"n":{"type":"integer"}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`}
	r, err := tools.NewRegistry(local)
	if err != nil {
		t.Fatal(err)
	}
	if r.Validate("local", json.RawMessage(`{"a":"x"}`)) == nil {
		t.Error("a local $ref was not applied")
	}
}

type schemaTool struct{ name, schema string }

func (s schemaTool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: s.name, Parameters: json.RawMessage(s.schema)}
}
func (schemaTool) Permission() string { return tools.PermRead }
func (schemaTool) Execute(context.Context, *tools.Call) (*tools.Result, error) {
	return tools.TextResult("ok"), nil
}

// Schemas from MCP servers and host adapters use more than the built-ins'
// keywords: every problem the walk can name is listed, one line each, in
// a stable order; what it cannot name is the validator's own text.
func TestValidateProblemLines(t *testing.T) {
	tests := []struct {
		name, schema, args string
		want               []string // the problem lines; nil = valid
	}{
		{"order", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a","c"],"additionalProperties":false}`,
			`{"z":1,"b":"x","a":2,"y":true}`,
			[]string{`- arguments: missing required property "c"`, "- a: expected string, got number", "- b: expected integer, got string", `- arguments: unknown properties "y", "z"`}},
		{"missing several", `{"type":"object","required":["a","b"]}`, `{}`, []string{`- arguments: missing required properties "a", "b"`}},
		{"defs", `{"type":"object","properties":{"item":{"$ref":"#/$defs/Item"}},"$defs":{"Item":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}}`,
			`{"item":{"m":1}}`, []string{`- item: missing required property "n"`}},
		{"definitions draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"l":{"type":"array","items":{"$ref":"#/definitions/E"}}},"definitions":{"E":{"enum":["a",1,null]}}}`,
			`{"l":["a",2]}`, []string{`- l[1]: must be one of "a", 1, null, got 2`}},
		{"nullable", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`, `{"a":1}`, []string{"- a: expected string or null, got number"}},
		{"const", `{"type":"object","properties":{"k":{"const":"x"}}}`, `{"k":"y"}`, []string{`- k: must be "x", got "y"`}},
		{"additional schema", `{"type":"object","additionalProperties":{"type":"boolean"}}`, `{"f":0}`, []string{"- f: expected boolean, got number"}},
		{"bounds", `{"type":"object","properties":{"n":{"type":"integer","minimum":3},"x":{"exclusiveMaximum":1.5},"s":{"type":"string","maxLength":2,"pattern":"^a"},"l":{"minItems":2}}}`,
			`{"n":1,"x":1.5,"s":"bcd","l":[]}`, []string{"- l: must have at least 2 items, got 0", "- n: must be at least 3, got 1",
				"- s: must be at most 2 characters long, got 3", `- s: must match the pattern "^a"`, "- x: must be less than 1.5, got 1.5"}},
		{"multipleOf", `{"multipleOf":2}`, `3`, []string{"- multipleOf: 3/1 is not a multiple of 2.000000"}},
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`, nil},
		{"pattern claims", `{"type":"object","patternProperties":{"^x_":{"type":"string"}},"additionalProperties":false}`, `{"x_a":"v"}`, nil},
		{"recursive", `{"type":"object","properties":{"child":{"$ref":"#"},"n":{"type":"integer"}}}`, `{"child":{"child":{"n":"x"}}}`, []string{"- child.child.n: expected integer, got string"}},
		{"anchor", `{"type":"object","properties":{"a":{"$ref":"#num"}},"$defs":{"n":{"$anchor":"num","type":"number"}}}`, `{"a":"1"}`, []string{"- a: expected number, got string"}},
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","required":["p"]}`, `{}`, []string{`- arguments: missing required property "p"`}},
		{"big integer", `{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":1e20}`, nil},
		{"deep", `{"type":"object","properties":{"c":{"$ref":"#"}}}`, strings.Repeat(`{"c":`, 200) + `{}` + strings.Repeat(`}`, 200),
			[]string{"- arguments: nested deeper than 128 levels"}},
		{"brackets in strings", `{"type":"object"}`, `{"s":"` + strings.Repeat(`[{`, 300) + `\""}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tools.NewRegistry(schemaTool{name: "t", schema: tt.schema})
			if err != nil {
				t.Fatal(err)
			}
			err = r.Validate("t", json.RawMessage(tt.args))
			if tt.name == "anyOf" {
				// true is neither: the validator's own words.
				var ae *tools.ArgsError
				if !errors.As(err, &ae) || len(ae.Problems) != 1 || !strings.HasPrefix(ae.Problems[0], "- anyOf: ") {
					t.Fatalf("anyOf: %v", err)
				}
				return
			}
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ae *tools.ArgsError
			if !errors.As(err, &ae) {
				t.Fatalf("want *ArgsError, got %v", err)
			}
			if diff := cmp.Diff(tt.want, ae.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// Schemas that cannot validate anything are refused when the registry is
// built (an MCP server's tool is then left out with a notice).
func TestNewRegistryRefusesSchema(t *testing.T) {
	for name, schema := range map[string]string{
		"type name":      `{"type":"object","properties":{"a":{"type":"text"}}}`,
		"unknown draft":  `{"$schema":"https://example.com/my-draft","type":"object"}`,
		"http ref":       `{"$ref":"https://example.com/s.json"}`,
		"required kind":  `{"type":"object","required":"a"}`,
		"not json":       `{"type":`,
		"bad pattern":    `{"type":"string","pattern":"("}`,
		"dangling local": `{"$ref":"#/$defs/none"}`,
		"self loop":      `{"$ref":"#"}`,
		"mutual loop":    `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`,
	} {
		if _, err := tools.NewRegistry(schemaTool{name: "t", schema: schema}); err == nil {
			t.Errorf("%s: %s compiled", name, schema)
		}
	}
}

package codemode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

func TestTSType(t *testing.T) {
	cases := []struct{ schema, want string }{
		{`{"type":"string"}`, "string"},
		{`{"type":"integer"}`, "number"},
		{`{"enum":["a",1]}`, `"a" | 1`},
		{`{"type":"array","items":{"enum":["x","y"]}}`, `("x" | "y")[]`},
		{`{"type":"object"}`, "Record<string, unknown>"},
		{`{"type":"object","properties":{"b":{"type":"boolean","description":"B"},"a-b":{"type":"string"}},"required":["a-b"]}`, `{ /** B */ b?: boolean; "a-b": string; }`},
		{``, "unknown"},
	}
	for _, c := range cases {
		if got := tsType(json.RawMessage(c.schema)); got != c.want {
			t.Errorf("%s: %q, want %q", c.schema, got, c.want)
		}
	}
}

func TestDeclBlockBudget(t *testing.T) {
	decls := []llm.ToolDecl{
		{Name: "zeta", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: tools.NameBash, Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		{Name: "alpha", Description: "first", Parameters: json.RawMessage(`{"type":"object"}`)},
	}
	got := declBlock(decls, 30)
	if !strings.HasPrefix(got, bashResultDecl+"\ndeclare const tools: {\n  /** first */\n  alpha(args: Record<string, unknown>): Promise<unknown>;\n") ||
		!strings.HasSuffix(got, "};\n// Also callable (use describeTool(name) for the signature): bash, zeta") {
		t.Fatalf("%s", got)
	}
	if declBlock(decls, 30) != got {
		t.Fatal("not deterministic")
	}
}

// The `on` description names the direct tools and the script-only ones;
// `only` inlines declarations. Both freeze once the tool list is known.
func TestDescriptions(t *testing.T) {
	list := []tools.Tool{fakeTool{"bash"}, fakeTool{"read"}, fakeTool{"ls"}}
	on := New(Config{Mode: ModeOn, Direct: []string{"bash", "read"}, List: func() []tools.Tool { return list }})
	d := on.Decl().Description
	if !strings.Contains(d, "same arguments: bash, read (tools.bash resolves to BashResult") || !strings.Contains(d, "Callable only from scripts: ls.") || strings.Contains(d, "ls(args:") {
		t.Fatalf("on: %s", d)
	}
	list = append(list, fakeTool{"later"})
	if on.Decl().Description != d {
		t.Fatal("the description changed after a tool was registered")
	}
	only := New(Config{Mode: ModeOnly, List: func() []tools.Tool { return list }})
	if d := only.Decl().Description; !strings.Contains(d, "declare const tools: {") || !strings.Contains(d, "later(args:") || !strings.Contains(d, "@options") {
		t.Fatalf("only: %s", d)
	}
}

func TestResolve(t *testing.T) {
	cases := []struct {
		preset string
		mode   Mode
		want   Mode
		active string
	}{
		{"", "", ModeOff, "bash,edit,glob,grep,read,write"}, // DefaultOn: the recorded default set
		{"default", ModeOn, ModeOn, "bash,edit,glob,grep,read,write,codemode"},
		{"minimal", "", ModeOff, "bash,edit,read,write"},
		{"codemode", "", ModeOnly, "codemode"},
		{"coordinator", ModeOn, ModeOn, "read,codemode"},
		{"default", ModeOff, ModeOff, "bash,edit,glob,grep,read,write"},
	}
	for _, c := range cases {
		s, err := Resolve(c.preset, c.mode)
		if err != nil || s.Mode != c.want || strings.Join(s.Active(nil), ",") != c.active {
			t.Errorf("%q %q: %+v %v", c.preset, c.mode, s, err)
		}
	}
	if _, err := Resolve("nope", ""); err == nil {
		t.Error("unknown preset accepted")
	}
}

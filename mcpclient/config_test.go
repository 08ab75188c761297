package mcpclient

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, in, source string
		want             string // Name/Transport/Command/Env/URL/Trust of each, or the error text
	}{
		{"absent", ``, SourceConfig, ""},
		{"object", `{"fs":{"command":"mcp-fs","args":["-r"],"env":{"B":"2","A":"1"},"trustReadOnlyHint":true}}`, SourceConfig, "fs stdio mcp-fs [A=1 B=2] trust"},
		{"acp shape", `[{"name":"fs","command":"x","args":[],"env":[{"name":"K","value":"v"}]}]`, SourceConfig, "fs stdio x [K=v]"},
		{"http", `{"web":{"type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer t"}}}`, SourceConfig, "web http https://example.com/mcp"},
		{"url means http", `{"web":{"url":"http://127.0.0.1:1/mcp"}}`, SourceConfig, "web http http://127.0.0.1:1/mcp"},
		{"sse", `{"old":{"type":"sse","url":"http://h/sse"}}`, SourceConfig, "old sse http://h/sse"},
		{"disabled", `{"fs":{"command":"x","disabled":true}}`, SourceConfig, ""},
		{"project cannot trust", `{"fs":{"command":"x","trustReadOnlyHint":true}}`, SourceProject, "fs stdio x []"},
		{"no command", `{"fs":{"args":["a"]}}`, SourceConfig, "needs a command"},
		{"bad type", `{"fs":{"type":"ws","url":"http://h"}}`, SourceConfig, "unknown type"},
		{"bad url", `{"fs":{"type":"http","url":"file:///etc/passwd"}}`, SourceConfig, "http or https"},
		{"unknown field", `{"fs":{"command":"x","cwd":"/"}}`, SourceConfig, "unknown field"},
		{"bad name", `{"a b":{"command":"x"}}`, SourceConfig, "may only hold"},
		{"double underscore", `{"a__b":{"command":"x"}}`, SourceConfig, "__"},
		{"env with =", `{"fs":{"command":"x","env":{"A=B":"1"}}}`, SourceConfig, "bad environment variable"},
		{"header newline", `{"w":{"url":"http://h","headers":{"X":"a\r\nB: c"}}}`, SourceConfig, "bad header"},
		{"name mismatch", `{"fs":{"name":"other","command":"x"}}`, SourceConfig, "differs"},
		{"not object", `"fs"`, SourceConfig, "object or an array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig(json.RawMessage(tc.in), tc.source)
			var s string
			if err != nil {
				s = err.Error()
				if !strings.Contains(s, tc.want) || tc.want == "" {
					t.Fatalf("error %q, want one containing %q", s, tc.want)
				}
				return
			}
			var parts []string
			for _, g := range got {
				p := g.Name + " " + g.Transport
				if g.Transport == TransportStdio {
					p += " " + g.Command + " [" + strings.Join(g.Env, " ") + "]"
				} else {
					p += " " + g.URL
				}
				if g.TrustReadOnly {
					p += " trust"
				}
				parts = append(parts, p)
			}
			if s = strings.Join(parts, "; "); s != tc.want {
				t.Fatalf("got %q, want %q", s, tc.want)
			}
		})
	}
}

func TestParseACP(t *testing.T) {
	raw := []json.RawMessage{
		json.RawMessage(`{"name":"fs","command":"/bin/fs","args":["a"],"env":[{"name":"K","value":"v"}],"trustReadOnlyHint":true}`),
		json.RawMessage(`{"type":"http","name":"web","url":"https://h/mcp","headers":[{"name":"X","value":"y"}]}`),
		json.RawMessage(`{"name":"","command":"x"}`),
		json.RawMessage(`[1]`),
	}
	got, errs := ParseACP(raw)
	if len(got) != 2 || len(errs) != 2 {
		t.Fatalf("got %+v errs %v", got, errs)
	}
	if got[0].TrustReadOnly {
		t.Error("a client may not trust a server's readOnlyHint")
	}
	if got[1].Headers["X"] != "y" || got[1].Source != SourceACP {
		t.Errorf("http = %+v", got[1])
	}
}

func TestMerge(t *testing.T) {
	user := []Server{{Name: "fs", Source: SourceConfig}}
	project := []Server{{Name: "FS", Source: SourceProject}, {Name: "extra", Source: SourceProject}}
	acp := []Server{{Name: "fs", Source: SourceACP}, {Name: "zed", Source: SourceACP}}
	got, errs := Merge(user, project, acp)
	var names []string
	for _, s := range got {
		names = append(names, s.Name+"/"+s.Source)
	}
	if strings.Join(names, ",") != "fs/config,extra/project,zed/acp" || len(errs) != 2 {
		t.Fatalf("merge = %v, errs %v", names, errs)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(`{"fs":{"command":"x","env":{"A":"1"}}}`)
	f.Add(`[{"name":"w","type":"sse","url":"http://h","headers":[{"name":"a","value":"b"}]}]`)
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseConfig(json.RawMessage(in), SourceProject)
		if err != nil {
			return
		}
		for _, s := range got {
			if checkName(s.Name) != nil || s.TrustReadOnly {
				t.Fatalf("accepted %+v", s)
			}
			if s.Transport == TransportStdio && s.Command == "" {
				t.Fatalf("stdio without a command: %+v", s)
			}
		}
	})
}

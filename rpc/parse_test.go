package rpc

import (
	"encoding/json"
	"testing"
)

func TestParseCommand(t *testing.T) {
	cases := []struct {
		in, name, id, perr string
	}{
		{`{"type":"prompt","id":"1"}`, "prompt", "1", ""},
		{`{"type":"prompt","id":1}`, "prompt", "", ""},
		{`{"type":"prompt","id":null}`, "prompt", "", ""},
		{`{"type":"prompt","id":{"x":1}}`, "prompt", "", ""},
		{`{"type":7}`, "", "", "missing type"},
		{`{"id":"x"}`, "", "", "missing type"},
		{`[{"type":"prompt"}]`, "", "", "missing type"},
		{`null`, "", "", "missing type"},
		{`{"type":"a"`, "", "", "JSON parse failed"},
		{`{"type":"a"} {"type":"b"}`, "", "", "JSON parse failed"},
		{` {"type":"get_state"} `, "get_state", "", ""},
	}
	for _, c := range cases {
		cmd, perr := parseCommand([]byte(c.in))
		if c.perr != "" {
			if len(perr) < len(c.perr) || perr[:len(c.perr)] != c.perr {
				t.Errorf("%s: parse error %q, want prefix %q", c.in, perr, c.perr)
			}
			continue
		}
		if perr != "" {
			t.Errorf("%s: unexpected parse error %q", c.in, perr)
			continue
		}
		id := ""
		if cmd.id != nil {
			id = *cmd.id
		}
		if cmd.name != c.name || id != c.id {
			t.Errorf("%s: got %q id %q", c.in, cmd.name, id)
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{`{"type":"prompt","id":"1","message":"x"}`, `[]`, `{`, `{"type":null}`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		cmd, perr := parseCommand(in)
		if perr == "" {
			if cmd == nil || !json.Valid(in) {
				t.Fatalf("accepted %q", in)
			}
			var v map[string]any
			if err := json.Unmarshal(in, &v); err != nil {
				t.Fatalf("accepted a non-object %q", in)
			}
			if s, ok := v["type"].(string); !ok || s != cmd.name {
				t.Fatalf("type mismatch for %q", in)
			}
		}
	})
}

func TestParamsMatchKeysExactly(t *testing.T) {
	var p struct {
		Message *string `json:"message"`
	}
	c := &command{raw: []byte(`{"type":"prompt","MESSAGE":"shout"}`)}
	if err := params(c, &p); err != nil || p.Message != nil {
		t.Fatalf("folded key used: %v %v", err, p.Message)
	}
	c = &command{raw: []byte(`{"type":"prompt","message":"x","Message":"y"}`)}
	if err := params(c, &p); err != nil || p.Message == nil || *p.Message != "x" {
		t.Fatalf("exact key lost: %v", err)
	}
}

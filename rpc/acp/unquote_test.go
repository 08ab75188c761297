package acp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// writeUnquoted decodes a JSON string literal exactly as encoding/json
// does (escapes, surrogate pairs, unpaired surrogates, invalid UTF-8).
func FuzzWriteUnquoted(f *testing.F) {
	for _, s := range []string{`""`, `"plain"`, `"a\nb\t\"q\"\\ \/ \b\f\r"`, `"\u00e9\u4e16"`, `"\ud83d\ude00"`,
		`"\ud83d x"`, `"\ude00"`, `"\ud83d\u0041"`, "\"\xff\xfe ok\"", "\"caf\xc3\xa9\"", `"\u0000"`, "\"\xed\xa0\x80\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		lit = bytes.TrimSpace(lit) // a member's value has no space around it
		var want string
		if len(lit) < 2 || lit[0] != '"' || json.Unmarshal(lit, &want) != nil {
			return // not a JSON string literal
		}
		var b strings.Builder
		writeUnquoted(&b, lit)
		if got := b.String(); got != want {
			t.Fatalf("writeUnquoted(%q) = %q, want %q", lit, got, want)
		}
	})
}

// A huge text block is joined into the message without a copy of its
// own, with the same message as the usual decoding; anything unusual
// takes the usual path.
func TestHugeTextBlock(t *testing.T) {
	big := strings.Repeat(`ab\n\u00e9`, hugeTextBytes/8)
	for _, tc := range []struct {
		name  string
		block string
		huge  bool
	}{
		{"text", `{"type":"text","text":"` + big + `"}`, true},
		{"text key in another case, last wins", `{"type":"text","text":"x","TEXT":"` + big + `"}`, true},
		{"not text", `{"type":"resource_link","uri":"file:///a","name":"` + big + `"}`, false},
		{"text not a string", `{"type":"text","text":1,"name":"` + big + `"}`, false},
		{"small", `{"type":"text","text":"small"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, huge := hugeText([]byte(tc.block))
			if huge != tc.huge {
				t.Fatalf("hugeText = %v, want %v", huge, tc.huge)
			}
			blocks := []json.RawMessage{json.RawMessage(`{"type":"text","text":"look"}`), json.RawMessage(tc.block)}
			got, gerr := promptInput(blocks)
			var b contentBlock
			if err := json.Unmarshal(blocks[1], &b); err != nil {
				if gerr == nil || !strings.Contains(gerr.Error(), err.Error()) {
					t.Fatalf("error %v, want one with %v", gerr, err)
				}
				return
			}
			want := "look\n" + b.Text
			if b.Type == "resource_link" {
				want = "look\n@" + b.URI
			}
			if gerr != nil || got.Message != want {
				t.Fatalf("message of %d bytes (err %v), want %d bytes", len(got.Message), gerr, len(want))
			}
		})
	}
}

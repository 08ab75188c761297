package jsonobj

import (
	"encoding/json"
	"testing"
)

// FuzzMembers: Members sees the keys and raw values encoding/json sees.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,{"c":"}"}],"a":"x\"y"}`, `{"\u0074ype":"p", "id" : null }`, `{"a":{"b":[[]]},"c":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) != nil || want == nil {
			return
		}
		got := map[string]string{}
		if !Members(b, func(k string, v []byte) { got[k] = string(v) }) {
			t.Fatalf("members refused %q", b)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: got %v, want %v", b, got, want)
		}
		for k, v := range want {
			if got[k] != string(v) {
				t.Fatalf("%q: key %q = %q, want %q", b, k, got[k], v)
			}
		}
	})
}

// FuzzElements: Elements sees the raw elements encoding/json sees.
func FuzzElements(f *testing.F) {
	for _, s := range []string{`[]`, ` [ 1 , "a]" , {"b":[2]} ] `, `[[],[[]],{"x":"\""}]`, `[null,true,-1.5e3]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []json.RawMessage
		if json.Unmarshal(b, &want) != nil || want == nil {
			return
		}
		var got []string
		if !Elements(b, func(v []byte) { got = append(got, string(v)) }) {
			t.Fatalf("Elements refused %q", b)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: got %q, want %q", b, got, want)
		}
		for i, v := range want {
			if got[i] != string(v) {
				t.Fatalf("%q: element %d = %q, want %q", b, i, got[i], v)
			}
		}
	})
}

// Elements refuses what is not an array, and Members what is not an object.
func TestShapes(t *testing.T) {
	if Elements([]byte(`{"a":1}`), func([]byte) {}) || Members([]byte(`[1]`), func(string, []byte) {}) {
		t.Fatal("a value of the other shape was accepted")
	}
	n := 0
	if !Elements([]byte(`[{"type":"text","text":"a,b]"},{"type":"image"}]`), func([]byte) { n++ }) || n != 2 {
		t.Fatalf("two blocks read as %d", n)
	}
}

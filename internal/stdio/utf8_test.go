package stdio

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestValidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"ok €"}`:                              `{"a":"ok €"}`,
		"{\"a\":\"\xff\xfe\"}":                      `{"a":"\ufffd\ufffd"}`,
		"{\"a\":\"cut \xe2\x82 x\"}":                `{"a":"cut \ufffd\ufffd x"}`,
		"{\"a\":\"surrogate \xed\xa0\x80\"}":        `{"a":"surrogate \ufffd\ufffd\ufffd"}`,
		"{\"a\":\"sep \u2028\u2029 \xe2\x80\xaa\"}": `{"a":"sep \u2028\u2029 ` + "\u202a" + `"}`,
	} {
		if got := string(ValidUTF8([]byte(in))); got != want {
			t.Errorf("ValidUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzValidUTF8: the result is valid UTF-8, a valid JSON line stays valid
// JSON, and valid input is returned unchanged.
func FuzzValidUTF8(f *testing.F) {
	f.Add([]byte("{\"a\":\"\xff\"}"))
	f.Add([]byte(`{"a":"€"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := ValidUTF8(b)
		if !utf8.Valid(got) {
			t.Fatalf("invalid UTF-8 out of %q", b)
		}
		if utf8.Valid(b) && !bytes.Contains(b, []byte("\u2028")) && !bytes.Contains(b, []byte("\u2029")) && !bytes.Equal(got, b) {
			t.Fatalf("valid input changed")
		}
		if json.Valid(b) && !json.Valid(got) {
			t.Fatalf("%q became invalid JSON: %q", b, got)
		}
	})
}

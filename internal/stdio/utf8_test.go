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
	f.Add([]byte("{\"a\":\"sep \u2028 \xe2\x80 \xed\xa0\x80 ascii run\"}"))
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
		if want := runeByRune(b); !bytes.Equal(got, want) {
			t.Fatalf("ValidUTF8(%q) = %q, the rune-by-rune rewrite %q", b, got, want)
		}
	})
}

// runeByRune is the rewrite ValidUTF8 had before jsonstr took it over
// (issue 37): one rune at a time, every invalid byte \ufffd, the
// separators escaped; the reference of the fuzz test.
func runeByRune(line []byte) []byte {
	out := make([]byte, 0, len(line)+64)
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRune(line[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case r == '\u2028':
			out = append(out, `\u2028`...)
		case r == '\u2029':
			out = append(out, `\u2029`...)
		default:
			out = append(out, line[i:i+n]...)
		}
		i += n
	}
	return out
}

package jsonstr

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

// plainRun never runs past a byte the byte loops treat specially: every
// byte value at every place of two words of plain bytes.
func TestPlainRunStopsAtEverySpecialByte(t *testing.T) {
	for _, html := range []bool{false, true} {
		for b := 0; b < 256; b++ {
			special := b < 0x20 || b >= 0x80 || b == '"' || b == '\\' || html && (b == '<' || b == '>' || b == '&')
			for at := 0; at < 16; at++ {
				s := []byte(strings.Repeat("x", 19))
				s[at] = byte(b)
				got, want := plainRun(s, html), 16
				if special {
					want = at &^ 7
				}
				if got != want {
					t.Fatalf("byte %#x at %d (html %v): run %d, want %d", b, at, html, got, want)
				}
				if plainRun(string(s), html) != got {
					t.Fatalf("byte %#x at %d: the string and []byte runs differ", b, at)
				}
			}
		}
	}
}

// Len and Append agree with encoding/json on texts of long plain runs
// broken by every kind of special byte, at every alignment.
func TestLenAndAppendMatchEncodingJSON(t *testing.T) {
	pieces := []string{"a", "plain text ", strings.Repeat("y", 70), "\"", "\\", "\n", "\x01", "\x7f", "<", ">", "&", "é", "世界", "\u2028", "\u2029", "\xff", "\xe2\x80"}
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for k := rng.Intn(12); k >= 0; k-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		s := b.String()
		var std bytes.Buffer
		enc := json.NewEncoder(&std)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		want := bytes.TrimSuffix(std.Bytes(), []byte("\n"))
		if got := Append(nil, s, Wire); !bytes.Equal(got, want) {
			t.Fatalf("Append(%q) = %s, want %s", s, got, want)
		}
		html, _ := json.Marshal(s)
		if Len(s, Wire, false) != len(want) || Len([]byte(s), Wire, true) != len(html) {
			t.Fatalf("Len(%q) = %d, %d (html), want %d, %d", s, Len(s, Wire, false), Len(s, Wire, true), len(want), len(html))
		}
		if got := Append(nil, []byte(s), Stringify); Len(s, Stringify, false) != len(got) {
			t.Fatalf("Len(%q, Stringify) = %d, Append wrote %d bytes", s, Len(s, Stringify, false), len(got))
		}
	}
}

package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendUnquoted: AppendUnquoted takes exactly the string literals
// encoding/json takes and decodes them to the same text (escapes,
// surrogate pairs, unpaired surrogates, invalid UTF-8), also with bytes
// after the literal.
func FuzzAppendUnquoted(f *testing.F) {
	for _, s := range []string{`""`, `"plain"`, `"a\nb\t\"q\"\\ \/ \b\f\r"`, `"\u00e9\u4e16"`, `"\ud83d\ude00"`,
		`"\ud83d x"`, `"\ude00"`, `"\ud83d\u0041"`, `"\ud83d\u00zz"`, `"\ud83d\`, "\"\xff\xfe ok\"", "\"caf\xc3\xa9\"",
		`"\u0000"`, "\"\xed\xa0\x80\"", `"\x"`, "\"a\nb\"", `"open`, `"ab"cd`, `x"`, ``, `"" `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		got, n, ok := AppendUnquoted([]byte("pre"), lit)
		var want string
		if len(lit) > 0 && lit[0] == '"' && json.Unmarshal(lit, &want) == nil {
			end := len(bytes.TrimRight(lit, " \t\r\n")) // encoding/json allows space after the value
			if !ok || n != end || string(got) != "pre"+want {
				t.Fatalf("AppendUnquoted(%q) = %q, %d, %v; want %q, %d, true", lit, got, n, ok, "pre"+want, end)
			}
		}
		if !ok {
			return
		}
		if err := json.Unmarshal(lit[:n], &want); err != nil || string(got) != "pre"+want {
			t.Fatalf("AppendUnquoted(%q) = %q, %d, true; encoding/json: %q, %v", lit, got, n, want, err)
		}
	})
}

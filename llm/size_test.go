package llm

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// The counted size and the one-buffer encoding of string content agree
// with encoding/json on every kind of character it escapes.
func TestEncodedLenOfStringContent(t *testing.T) {
	alphabet := []string{"a", "é", "€", "😀", "<", ">", "&", `"`, `\`, "\n", "\t", "\x01", "\x1f", "\x7f", "\u2028", "\u2029", "\xff", "\xe2\x82", "\ufeff"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		var b bytes.Buffer
		for j := rng.IntN(12); j > 0; j-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		text := b.String()
		for _, m := range []any{
			&UserMessage{Role: "user", Content: StringContent(text), Timestamp: 7, Origin: "host"},
			&CustomMessage{Role: "custom", CustomType: "x", Content: StringContent(text), Details: json.RawMessage(`{"a":"<"}`)},
		} {
			want, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if got := EncodedLen(m); got != len(want) {
				t.Fatalf("EncodedLen %q = %d, json.Marshal has %d bytes", text, got, len(want))
			}
		}
		got, _ := StringContent(text).MarshalJSON()
		want, _ := marshalRaw(text, 0)
		if !bytes.Equal(got, want) {
			t.Fatalf("MarshalJSON %q = %s, encoding/json %s", text, got, want)
		}
	}
}

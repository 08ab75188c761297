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

// A spliced encoding is byte-identical to encoding/json's (HTML escaping
// off) for huge string content with every kind of escaped character.
func TestSpliceTextMatchesEncodingJSON(t *testing.T) {
	alphabet := []string{"a", "é", "😀", "<", "&", `"`, `\`, "\n", "\x01", "\u2028", "\xff", "\x00ama-splice\x00"}
	var b bytes.Buffer
	for i := 0; b.Len() < SpliceBytes+100; i++ {
		b.WriteString(alphabet[i*7%len(alphabet)])
	}
	text := b.String()
	for _, m := range []Message{
		&UserMessage{Role: "user", Content: StringContent(text), Timestamp: 7, Origin: "host"},
		&CustomMessage{Role: "custom", CustomType: "x", Content: StringContent(text), Display: true},
	} {
		got, skel, ok := BigText(m)
		if !ok || got != text {
			t.Fatal("BigText did not take the message")
		}
		line, ok := SpliceText([]byte(encodeNoHTMLInternal(t, skel)), text)
		if !ok {
			t.Fatal("placeholder not found")
		}
		if want := encodeNoHTMLInternal(t, m); string(line) != want {
			t.Fatalf("spliced encoding differs from encoding/json")
		}
	}
	if _, _, ok := BigText(&UserMessage{Content: StringContent("small")}); ok {
		t.Fatal("a small text is spliced")
	}
}

func encodeNoHTMLInternal(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

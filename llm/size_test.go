package llm

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/armadra/ama-rpc/internal/jsonstr"
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
// off) for messages with big strings, of every kind of escaped character,
// in string content and in blocks.
func TestSpliceStringsMatchesEncodingJSON(t *testing.T) {
	alphabet := []string{"a", "é", "😀", "<", "&", `"`, `\`, "\n", "\x01", "\u2028", "\xff", placeholder(0), placeholder(1)}
	var b bytes.Buffer
	for i := 0; b.Len() < SpliceBytes+100; i++ {
		b.WriteString(alphabet[i*7%len(alphabet)])
	}
	text := b.String()
	img := string(bytes.Repeat([]byte("QUJD"), SpliceBytes/2))
	for i, m := range []Message{
		&UserMessage{Role: "user", Content: StringContent(text), Timestamp: 7, Origin: "host"},
		&CustomMessage{Role: "custom", CustomType: "x", Content: StringContent(text), Display: true},
		&UserMessage{Role: "user", Content: BlockContent(Text(text), Image(img, "image/png"), Text("small"), Image(img, "image/jpeg"))},
		&ToolResultMessage{Role: "toolResult", ToolCallID: "c", ToolName: placeholder(1), Content: []Content{Image(img, "image/png")}},
		&AssistantMessage{Role: "assistant", Content: []Content{&ThinkingContent{Type: "thinking", Thinking: text}, Text(text)}},
	} {
		strs, skel, ok := BigStrings(m)
		if !ok {
			t.Fatalf("message %d: BigStrings did not take it", i)
		}
		want := encodeNoHTMLInternal(t, m)
		line, spans, ok := SpliceStrings([]byte(encodeNoHTMLInternal(t, skel)), strs)
		if !ok {
			t.Fatalf("message %d: placeholders not found", i)
		}
		if string(line) != want {
			t.Fatalf("message %d: spliced encoding differs from encoding/json", i)
		}
		for k, sp := range spans {
			if tok := line[sp[0]:sp[1]]; string(tok) != string(jsonstr.Append(nil, strs[k], jsonstr.Wire)) {
				t.Fatalf("message %d: span %d is not string %d", i, k, k)
			}
		}
	}
	if _, _, ok := BigStrings(&UserMessage{Content: StringContent("small")}); ok {
		t.Fatal("a small text is spliced")
	}
	// A placeholder that occurs twice (a small field holding the marker
	// itself, before the big string) is refused, so the caller encodes
	// the plain way.
	m := &CustomMessage{Role: "custom", CustomType: placeholder(0), Content: StringContent(text)}
	strs, skel, _ := BigStrings(m)
	if _, _, ok := SpliceStrings([]byte(encodeNoHTMLInternal(t, skel)), strs); ok {
		t.Fatal("a doubled placeholder was spliced")
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

// EncodedLen counts the big strings of every message kind (block texts,
// thinking, image data, tool results) without encoding them, and agrees
// with encoding/json; MoveStrings swaps exactly those strings in a copy.
func TestEncodedLenAndMoveOfBigStrings(t *testing.T) {
	big := func(c string) string { return string(bytes.Repeat([]byte(c), SpliceBytes+3)) }
	text, html, img := big("a\n"), big("<&>\u2028"), big("QUJD")
	msgs := []Message{
		&UserMessage{Role: "user", Content: BlockContent(Text(text), Image(img, "image/png"), Text("small")), Timestamp: 1},
		&CustomMessage{Role: "custom", CustomType: "x", Content: BlockContent(Text(html))},
		&ToolResultMessage{Role: "toolResult", ToolCallID: "c", ToolName: "read", Content: []Content{Image(img, "image/png"), Text(html)}},
		&AssistantMessage{Role: "assistant", Content: []Content{&ThinkingContent{Type: "thinking", Thinking: text}, Text(html)}},
		&UserMessage{Role: "user", Content: StringContent(html)},
	}
	for i, m := range msgs {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := EncodedLen(m); got != len(want) {
			t.Fatalf("message %d: EncodedLen %d, json.Marshal %d bytes", i, got, len(want))
		}
		moves := 0
		moved := MoveStrings(m, func(s string) (string, bool) {
			moves++
			c := string(append([]byte(nil), s...)) // the same characters elsewhere
			keepMoved = append(keepMoved, c)       // never freed, as a moved string must be
			return c, true
		})
		again, _ := json.Marshal(moved)
		if moved == m || !bytes.Equal(again, want) || EncodedLen(moved) != len(want) {
			t.Fatalf("message %d: the moved copy differs", i)
		}
		if before, _ := json.Marshal(m); !bytes.Equal(before, want) {
			t.Fatalf("message %d: MoveStrings modified its argument", i)
		}
		if n := map[int]int{0: 2, 1: 1, 2: 2, 3: 2, 4: 1}[i]; moves != n {
			t.Fatalf("message %d: %d strings moved, want %d (the big ones)", i, moves, n)
		}
		if MoveStrings(m, func(s string) (string, bool) { return s, false }) != m {
			t.Fatalf("message %d: a refused move made a copy", i)
		}
	}
}

// keepMoved holds the test's moved strings for the life of the process:
// their lengths are recorded by address (NoteMovedText).
var keepMoved []string

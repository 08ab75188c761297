package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/armadra/ama-rpc/llm"
)

// inside reports whether s's bytes lie inside b.
func inside(s string, b []byte) bool {
	if len(s) == 0 || len(b) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(b))
}

func userText(t *testing.T, m llm.Message) string {
	t.Helper()
	u, ok := m.(*llm.UserMessage)
	if !ok {
		t.Fatalf("message %T, want *llm.UserMessage", m)
	}
	return u.Content.Text
}

// A huge prompt is held once: the cached message's text is the body's
// bytes, for a new entry and for one read back; a text that needs JSON
// escapes keeps its own (equal) copy. The caller's message is not changed.
func TestHugeTextHeldOnce(t *testing.T) {
	plain := strings.Repeat("a", llm.SpliceBytes+10)
	escaped := strings.Repeat("a\n\"", llm.SpliceBytes/3+10)
	for _, tc := range []struct {
		name, text string
		shared     bool
	}{
		{"plain", plain, true},
		{"escaped", escaped, false},
		{"u2028", plain + "\u2028", false},
		{"small", "hello", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := llm.NewUser(tc.text, 1, "")
			e := MessageEntry(orig)
			if orig.Content.Text != tc.text {
				t.Fatal("MessageEntry changed the caller's message")
			}
			m, err := e.Message()
			if err != nil {
				t.Fatal(err)
			}
			if got := userText(t, m); got != tc.text {
				t.Fatalf("text changed (len %d, want %d)", len(got), len(tc.text))
			} else if inside(got, e.Body()) != tc.shared {
				t.Fatalf("text in body = %v, want %v", inside(got, e.Body()), tc.shared)
			}
			// Read back from its line.
			e.ID, e.Timestamp = "e1", "2026-10-01T00:00:00.000Z"
			var r Entry
			if err := json.Unmarshal(e.AppendJSON(nil), &r); err != nil {
				t.Fatal(err)
			}
			rm, err := r.Message()
			if err != nil {
				t.Fatal(err)
			}
			if got := userText(t, rm); got != tc.text {
				t.Fatalf("read back: text changed")
			} else if inside(got, r.Body()) != tc.shared {
				t.Fatalf("read back: text in body = %v, want %v", inside(got, r.Body()), tc.shared)
			}
			if !bytes.Equal(r.Body(), e.Body()) {
				t.Fatal("body changed by the round trip")
			}
		})
	}
}

// A huge custom message read back is held once too.
func TestHugeCustomTextHeldOnce(t *testing.T) {
	text := strings.Repeat("b", llm.SpliceBytes+1)
	e := CustomMessageEntry(llm.NewCustom("x", text, true, 1))
	e.ID, e.Timestamp = "c1", "2026-10-01T00:00:00.000Z"
	var r Entry
	if err := json.Unmarshal(e.AppendJSON(nil), &r); err != nil {
		t.Fatal(err)
	}
	m, ok, err := r.contextMessage()
	if err != nil || !ok {
		t.Fatalf("contextMessage: %v %v", ok, err)
	}
	got := m.(*llm.CustomMessage).Content.Text
	if got != text || !inside(got, r.Body()) {
		t.Fatalf("custom text equal %v, in body %v", got == text, inside(got, r.Body()))
	}
}

// Append writes a huge body in place; the file is byte-identical to the
// lines AppendJSON builds, and a failure in any piece rolls back.
func TestAppendHugeBody(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	h := NewHeader("s", mustParse(t, "2026-10-01T00:00:00Z"), "/w", "1")
	f, err := Create(path, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, _ := os.ReadFile(path)
	small := RawEntry(TypeCustom, json.RawMessage(`{"customType":"x","data":1}`))
	small.ID, small.Timestamp = "e1", "t"
	big := MessageEntry(llm.NewUser(strings.Repeat("z", directBody+5), 1, ""))
	big.ID, big.ParentID, big.Timestamp = "e2", &small.ID, "t"
	tail := RawEntry(TypeCustom, json.RawMessage(`{}`))
	tail.ID, tail.ParentID, tail.Timestamp = "e3", &big.ID, "t"

	real := f.fd.(*os.File)
	f.fd = &failingWriter{File: real}
	if err := f.Append(small, big, tail); !errors.Is(err, errDiskFull) {
		t.Fatalf("Append error = %v, want the write error", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("file changed by a failed append")
	}
	f.fd = &nthFailingWriter{File: real, ok: 2} // the body is written, then the rest fails
	if err := f.Append(small, big, tail); !errors.Is(err, errDiskFull) {
		t.Fatalf("Append error = %v, want the write error", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("file changed by an append failing after the body")
	}
	f.fd = real
	if err := f.Append(small, big, tail); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), before...)
	for _, e := range []*Entry{small, big, tail} {
		want = append(e.AppendJSON(want), '\n')
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Fatalf("file is not the AppendJSON lines (%d bytes, want %d)", len(got), len(want))
	}
}

// nthFailingWriter lets ok writes through, then fails without writing.
type nthFailingWriter struct {
	*os.File
	ok int
}

func (w *nthFailingWriter) Write(p []byte) (int, error) {
	if w.ok == 0 {
		return 0, errDiskFull
	}
	w.ok--
	return w.File.Write(p)
}

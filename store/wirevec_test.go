package store

import (
	"bytes"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/internal/jsonstr"
	"github.com/armadra/ama-rpc/internal/stdio"
)

// The differential guard of the stored-bytes paths (issue 37): an entry
// whose stored bytes need no re-encoding (plain, wireReady) is written as
// it is stored, by AppendJSON (session files, forks) and by WriteVec
// (get_tree's vectors); both must write exactly what the encoding path
// writes (appendHead, bodyInner, appendTail), and WriteVec what AppendNodesJSON
// becomes after the writer's UTF-8 pass (stdio.ValidUTF8).

// encodedJSON is AppendJSON by the encoding path alone.
func encodedJSON(e *Entry) []byte {
	inner := bodyInner(e.Body())
	dst := e.appendHead(nil, len(inner) > 0)
	dst = append(dst, inner...)
	return e.appendTail(dst)
}

// checkWirePaths compares the stored-bytes paths with the encoding paths
// over entries (file order) and their tree.
func checkWirePaths(t *testing.T, entries []*Entry) {
	t.Helper()
	for _, e := range entries {
		if e.facts&factPlainHead != 0 && !(plainString(e.Type) && plainString(e.ID) && (e.ParentID == nil || plainString(*e.ParentID)) && plainString(e.Timestamp)) {
			t.Fatalf("entry %q: factPlainHead but %q %q %v %q", e.ID, e.Type, e.ID, e.ParentID, e.Timestamp)
		}
		if got, want := e.AppendJSON(nil), encodedJSON(e); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON of %q (plain %v):\n got %q\nwant %q", e.ID, e.plain(), got, want)
		}
		if e.wireReady() && !jsonstr.WireClean(e.AppendJSON(nil)) {
			t.Fatalf("entry %q is wire-ready but its line is not wire-clean: %q", e.ID, e.AppendJSON(nil))
		}
	}
	var leaf *string
	if n := len(entries); n > 0 {
		leaf = &entries[n-1].ID
	}
	tr := NewTree(entries, leaf)
	j := tr.NodesJSON()
	head, tail := []byte(`{"id":"1","data":{"tree":`), []byte("}}\n")
	want := append(append(append([]byte(nil), head...), stdio.ValidUTF8(AppendNodesJSON(nil, tr.Nodes()))...), tail...)
	var got []byte
	j.WriteVec(head, tail, func(vec [][]byte) {
		if len(vec) > vecPieces+2 {
			t.Fatalf("a vector of %d pieces", len(vec))
		}
		for _, p := range vec {
			if !jsonstr.WireClean(p) {
				t.Fatalf("piece not wire-clean: %q", p)
			}
			got = append(got, p...)
		}
	})
	if !bytes.Equal(got, want) {
		t.Fatalf("WriteVec differs from AppendNodesJSON+ValidUTF8:\n got %q\nwant %q", got, want)
	}
}

// entriesOf reads the lines of text that are entries (UnmarshalJSON: the
// scanner, or encoding/json when it fails) and, for every line that is a
// JSON object, its body as a RawEntry too (learnBody's path).
func entriesOf(text []byte) []*Entry {
	var out []*Entry
	for _, line := range bytes.Split(text, []byte{'\n'}) {
		e := new(Entry)
		if e.UnmarshalJSON(line) == nil && e.Type != HeaderType && e.Type != leafType {
			out = append(out, e)
			r := RawEntry(e.Type, bytes.Clone(line))
			r.ID, r.ParentID, r.Timestamp = e.ID+"r", e.ParentID, e.Timestamp
			out = append(out, r)
		}
	}
	return out
}

var wireSeeds = []string{
	`{"type":"message","message":{"role":"user","content":"hi"},"id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}`,
	`{"type":"message","message":{"role":"user","content":"caf\u00e9 \u2028 ok"},"id":"b","parentId":"a","timestamp":"t"}`,
	"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"raw \xe2\x80\xa8 sep \xff bad \xc3\xa9\"},\"id\":\"c\",\"parentId\":\"b\",\"timestamp\":\"t\"}",
	`{"id":"d","type":"custom","parentId":"c","customType":"x","data":{ "a" : [1, 2] },"timestamp":"t"}`,
	`{ "type" : "label" , "targetId" : "c" , "label" : "caf` + "\xc3\xa9" + ` \u2029" , "id" : "e" , "parentId" : "d" , "timestamp" : 12 }`,
	`{"type":"label","targetId":"d","label":"` + "\xe2\x80\xa9 raw" + `","id":"f","parentId":"e","timestamp":{"a":"b"}}`,
	`{"type":"session_info","name":"n","id":"g\"q","parentId":"f","timestamp":"t\u0001"}`,
	`{"type":"custom","id":"h` + "\xc3\xa9" + `","parentId":"g\"q","timestamp":"` + "\xe2\x80\xa8" + `"}`,
	`{"type":"thinking_level_change","thinkingLevel":"high","id":"i","parentId":"h` + "\xc3\xa9" + `","timestamp":"t"}`,
	`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"` + strings.Repeat("long text ", 2000) + `"}]},"id":"j","parentId":"i","timestamp":"t"}`,
	`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"` + strings.Repeat("long \xe2\x80\xa8 ", 3000) + `"}]},"id":"k","parentId":"j","timestamp":"t"}`,
	`{"type":"custom","id":"l","parentId":"zz","timestamp":"t","customType":"orphan"}`,
	`{"type":"custom","id":"m","parentId":"l","timestamp":"t"}` + "\n" + `{"type":"custom","id":"m","parentId":"m","timestamp":"t"}`,
	`{"type":"label","targetId":"later","label":"x","id":"n","parentId":"a","timestamp":"t"}`,
	`{"type":"custom","id":"later","parentId":"a","timestamp":"t","v":"\t"}`,
}

func TestWirePaths(t *testing.T) {
	all := entriesOf([]byte(strings.Join(wireSeeds, "\n")))
	var ready, plainOnly, encoded int
	for _, e := range all {
		switch {
		case e.wireReady():
			ready++
		case e.plain():
			plainOnly++
		default:
			encoded++
		}
	}
	if ready == 0 || plainOnly == 0 || encoded == 0 {
		t.Fatalf("the seeds must reach every path: wire-ready %d, plain only %d, encoded %d", ready, plainOnly, encoded)
	}
	checkWirePaths(t, all)
	for _, s := range wireSeeds {
		checkWirePaths(t, entriesOf([]byte(s)))
	}
	// Entries made in memory (newEntry, MessageEntry's splice) get their
	// facts from learnBody.
	var made []*Entry
	for i, e := range []*Entry{
		LabelEntry("a", "caf\u00e9 \u2028"), SessionInfoEntry("n\u2029"), CustomEntry("x", map[string]any{"s": "\xff"}),
		ThinkingLevelEntry("high"), RawEntry(TypeCustom, []byte(` {"a":1} `)), RawEntry(TypeCustom, []byte("{\"a\":\"\xe2\x80\xa8\"}")),
		RawEntry(TypeCustom, nil), RawEntry(TypeCustom, []byte(`{}`)), RawEntry(TypeCustom, []byte("{\u00a0\"a\":1}")),
	} {
		e.ID, e.Timestamp = string(rune('a'+i)), "2026-01-01T00:00:00.000Z"
		if i > 0 {
			e.ParentID = &made[i-1].ID
		}
		made = append(made, e)
	}
	checkWirePaths(t, made)
}

// FuzzWirePaths runs the comparison over fuzzed session text.
func FuzzWirePaths(f *testing.F) {
	f.Add([]byte(strings.Join(wireSeeds[:9], "\n")))
	for _, s := range wireSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if len(text) > 1<<20 {
			return
		}
		checkWirePaths(t, entriesOf(text))
	})
}

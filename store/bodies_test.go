package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// Bodies names a body type for every entry type constant of entry.go.
func TestBodiesComplete(t *testing.T) {
	src, err := os.ReadFile("entry.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := regexp.MustCompile(`(?m)^\tType\w+\s*=\s*"([a-z_]+)"`).FindAllSubmatch(src, -1)
	if len(consts) == 0 {
		t.Fatal("no entry type constants found in entry.go")
	}
	bodies := Bodies()
	for _, m := range consts {
		if _, ok := bodies[string(m[1])]; !ok {
			t.Errorf("entry type %q has no body type in Bodies", m[1])
		}
	}
	if len(bodies) != len(consts) {
		t.Errorf("Bodies has %d types, entry.go %d constants", len(bodies), len(consts))
	}
}

// A leaf line AppendLeaf writes decodes into LeafLine with nothing left
// over, and encodes back to the same bytes.
func TestLeafLineShape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, err := Create(path, NewHeader("11111111-2222-4333-8444-555555555555", time.Unix(0, 0), "/w", "1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := "a1"
	for _, leaf := range []*string{&id, nil} {
		if err := f.AppendLeaf(leaf, "2026-01-02T03:04:05.000Z"); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))[1:]
	if len(lines) != 2 {
		t.Fatalf("%d leaf lines", len(lines))
	}
	for _, l := range lines {
		var ll LeafLine
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ll); err != nil || ll.Type != LeafType {
			t.Fatalf("%s: %v %+v", l, err, ll)
		}
		back, _ := json.Marshal(ll)
		if !bytes.Equal(back, l) {
			t.Errorf("LeafLine encodes %s, AppendLeaf wrote %s", back, l)
		}
	}
}

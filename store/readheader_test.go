package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadHeader reads the header line alone, with ReadSnapshot's rules for
// it: blank lines before it are skipped, what follows it is not read (a
// corrupt entry does not matter), a file without a header is corrupt, a
// missing one is not found.
func TestReadHeader(t *testing.T) {
	dir := t.TempDir()
	head := `{"type":"session","version":1,"id":"abc-1","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/w","agent":{"name":"ama","version":"1"},"parentSession":"/p.jsonl"}`
	cases := []struct {
		name, text string
		id, err    string
	}{
		{name: "header then a corrupt entry", text: head + "\n{not json\n{\"type\":\"message\"}\n", id: "abc-1"},
		{name: "blank lines first", text: "\n  \r\n" + head + "\n", id: "abc-1"},
		{name: "no final newline", text: head, id: "abc-1"},
		{name: "long header", text: strings.Replace(head, `"/w"`, `"/`+strings.Repeat("w", 10000)+`"`, 1) + "\n", id: "abc-1"},
		{name: "entry first", text: `{"type":"message","id":"a"}` + "\n" + head + "\n", err: ReasonMissingHeader},
		{name: "no id", text: `{"type":"session","version":1,"cwd":"/w"}` + "\n", err: ReasonMalformedHeader},
		{name: "empty", text: "", err: ReasonMissingHeader},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".jsonl")
			if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			h, err := ReadHeader(path)
			if c.err != "" {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %s", err, c.err)
				}
				return
			}
			if err != nil || h.ID != c.id || !strings.HasPrefix(h.Cwd, "/w") {
				t.Fatalf("header %+v, err %v", h, err)
			}
			if c.name == "header then a corrupt entry" && h.ParentSession != "/p.jsonl" {
				t.Errorf("parentSession %q", h.ParentSession)
			}
		})
	}
	if _, err := ReadHeader(filepath.Join(dir, "nope.jsonl")); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
}

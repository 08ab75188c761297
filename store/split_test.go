package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadSplitMatchesOnePass splits every test session file at every line
// boundary and checks that the two-half read gives exactly the one-pass
// snapshot and tail, and gives up (so the caller reads in one pass and
// reports the same error) whenever the one-pass read fails.
func TestReadSplitMatchesOnePass(t *testing.T) {
	files, _ := filepath.Glob("../../shared/reference/ama-goldens/sessions/*.jsonl")
	if len(files) == 0 {
		t.Log("../shared/reference is absent: only the local and synthetic sessions are split")
	}
	shared := len(files)
	local, _ := filepath.Glob("testdata/*.jsonl")
	files = append(files, local...)
	dir := t.TempDir()
	header := `{"type":"session","version":1,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}`
	synth := map[string]string{
		"leaf-and-names": header + "\n" +
			`{"type":"message","message":{"role":"user","content":"a"},"id":"a","parentId":null,"timestamp":"t"}` + "\n\n" +
			`{"type":"session_info","name":"one","id":"n1","parentId":"a","timestamp":"t"}` + "\n" +
			`{"type":"leaf","id":"a"}` + "\n   \n" +
			`{"type":"custom","customType":"x","data":1,"id":"b","parentId":"a","timestamp":"t"}` + "\n" +
			`{"type":"leaf","id":null}` + "\n" +
			`{"type":"leaf","id":"n1"}` + "\n\n",
		"name-then-nothing": header + "\n" +
			`{"type":"session_info","name":"first","id":"n1","parentId":null,"timestamp":"t"}` + "\n" +
			`{"type":"session_info","id":"n2","parentId":"n1","timestamp":"t"}` + "\n" +
			`{"type":"leaf","id":"n1"}` + "\n\n\n",
		"bad-late": header + "\n" +
			`{"type":"label","targetId":"x","id":"l1","parentId":null,"timestamp":"t"}` + "\n\n" +
			`{"type":"label","targetId":"x","id":"l2","parentId":"l1","timestamp":"t"}` + "\n" +
			`{"id":"no-type"}` + "\n" +
			`{"type":"leaf","id":"l1"}` + "\n",
		"half-tail": header + "\n" +
			`{"type":"label","targetId":"x","id":"l1","parentId":null,"timestamp":"t"}` + "\n" +
			`{"type":"label","targetId":"x","id":"l2","par`,
		"second-header": header + "\n\n" + header + "\n",
		"blank-only-head": "\n\n \n" + header + "\n" +
			`{"type":"label","targetId":"x","id":"l1","parentId":null,"timestamp":"t"}` + "\n",
	}
	for name, text := range synth {
		p := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	if len(local) == 0 || (shared > 0 && shared < 3) {
		t.Fatalf("too few files: %v", files)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, wantTail, wantErr := readSnapshot(bytes.NewReader(data), path)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for split := range len(data) {
			if data[split] != '\n' {
				continue
			}
			got, gotTail, ok := readSplitAt(f, path, int64(split+1))
			if !ok {
				if wantErr == nil && !blankBefore(data[:split+1]) {
					t.Errorf("%s split at %d: gave up on a file that reads", path, split+1)
				}
				continue
			}
			if wantErr != nil {
				t.Errorf("%s split at %d: read a file that fails with %v", path, split+1, wantErr)
				continue
			}
			if gotTail != wantTail {
				t.Errorf("%s split at %d: tail %+v, want %+v", path, split+1, gotTail, wantTail)
			}
			sameSnapshot(t, path, got, want)
		}
		// Through the public entry points too (the split is then at the middle).
		old := splitMin
		splitMin = 0
		got, err := ReadSnapshot(path)
		splitMin = old
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("%s: ReadSnapshot error %v, want %v", path, err, wantErr)
		} else if err == nil {
			sameSnapshot(t, path, got, want)
		}
		f.Close()
	}
}

func blankBefore(b []byte) bool { return strings.TrimSpace(string(b)) == "" }

func sameSnapshot(t *testing.T, path string, got, want *Snapshot) {
	t.Helper()
	if got.Path != want.Path || got.Header.ID != want.Header.ID || got.Name != want.Name ||
		got.RepairedTail != want.RepairedTail || got.MissingNewline != want.MissingNewline ||
		(got.LeafID == nil) != (want.LeafID == nil) || (got.LeafID != nil && *got.LeafID != *want.LeafID) ||
		len(got.Entries) != len(want.Entries) {
		t.Errorf("%s: snapshot %+v, want %+v", path, got, want)
		return
	}
	for i, g := range got.Entries {
		w := want.Entries[i]
		if g.Type != w.Type || g.ID != w.ID || (g.ParentID == nil) != (w.ParentID == nil) ||
			(g.ParentID != nil && *g.ParentID != *w.ParentID) || g.Timestamp != w.Timestamp ||
			!bytes.Equal(g.Body(), w.Body()) || g.facts != w.facts || g.span != w.span {
			t.Errorf("%s: entry %d differs: %+v, want %+v", path, i, g, w)
		}
	}
}

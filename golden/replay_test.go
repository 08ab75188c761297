package golden_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/golden"
)

var update = os.Getenv("UPDATE_GOLDEN") == "1"

// TestFixtures replays every fixture under test/fixtures/rpc and
// test/fixtures/acp and compares the normalised transcript with out.jsonl.
func TestFixtures(t *testing.T) {
	dirs, err := filepath.Glob("../test/fixtures/rpc/*")
	acp, aerr := filepath.Glob("../test/fixtures/acp/*")
	if err != nil || aerr != nil || len(dirs) == 0 || len(acp) == 0 {
		t.Fatalf("no fixtures: %v %v", err, aerr)
	}
	for _, dir := range append(dirs, acp...) {
		name := filepath.Base(dir)
		if filepath.Base(filepath.Dir(dir)) == "acp" {
			name = "acp-" + name
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, _, got := golden.RunCase(t, dir)
			for i, l := range r.Lines() {
				if !json.Valid(l) {
					t.Fatalf("stdout line %d is not one JSON value: %q", i+1, l)
				}
				if !utf8.Valid(l) {
					t.Fatalf("stdout line %d is not valid UTF-8: %q", i+1, l)
				}
			}
			path := filepath.Join(dir, "out.jsonl")
			if update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
			}
			want = golden.MergeTranscript(want)
			if !bytes.Equal(want, got) {
				t.Errorf("transcript differs from %s (UPDATE_GOLDEN=1 rewrites it)\n%s\nstderr:\n%s", path, lineDiff(want, got), r.Stderr())
			}
		})
	}
}

// lineDiff shows the first differing lines.
func lineDiff(want, got []byte) string {
	w := bytes.Split(want, []byte("\n"))
	g := bytes.Split(got, []byte("\n"))
	var buf bytes.Buffer
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b []byte
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if !bytes.Equal(a, b) {
			buf.WriteString("line " + itoa(i+1) + ":\n  want: " + string(a) + "\n  got:  " + string(b) + "\n")
			if shown++; shown == 5 {
				break
			}
		}
	}
	return buf.String()
}

func itoa(n int) string {
	return string([]byte(func() string { b, _ := json.Marshal(n); return string(b) }()))
}

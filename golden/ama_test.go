package golden_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// refDir holds the transcripts recorded from the TypeScript ama.
const refDir = "../../shared/reference/ama-goldens/rpc"

// TestReferenceShapes plays our inputs for the reference goldens
// (test/fixtures/ama/<name>: their one play, with the checks registered on
// them, afterFixture) and compares each transcript by shape with the
// reference transcript <name>.out.jsonl of the TypeScript ama, when
// ../shared holds it.
func TestReferenceShapes(t *testing.T) {
	_, refErr := os.Stat(refDir)
	if refErr != nil {
		t.Logf("reference goldens not available (%s): the cases run without the comparison: %v", refDir, refErr)
	}
	dirs, err := filepath.Glob("../test/fixtures/ama/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no reference cases: %v", err)
	}
	played := map[string]bool{}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		played[fixtureKey(dir)] = true
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, c, got := golden.RunCase(t, dir)
			for _, fc := range fixtureChecks[fixtureKey(dir)] {
				t.Run(fc.name, func(t *testing.T) { fc.check(t, r, c) })
			}
			if refErr != nil {
				return
			}
			want, err := os.ReadFile(filepath.Join(refDir, name+".out.jsonl"))
			if err != nil {
				t.Skipf("reference %s.out.jsonl missing: %v", name, err)
			}
			compareTranscripts(t, want, got)
		})
	}
	for key := range fixtureChecks {
		if strings.HasPrefix(key, "ama/") && !played[key] {
			t.Errorf("a check is registered on fixture %s, which does not exist", key)
		}
	}
}

// compareTranscripts compares two normalised transcripts by shape.
func compareTranscripts(t *testing.T, want, got []byte) {
	t.Helper()
	// The reference may split a reply into more deltas than our writer
	// sends when its reader is behind; both sides are compared merged.
	wl := splitLines(golden.MergeTranscript(want))
	gl := splitLines(got)
	rules := golden.DefaultShapeRules()
	prose := rules.Prose
	rules.FreeArray = func(path []string) bool {
		// hello.capabilities: ama-rpc announces the capabilities it
		// implements (approvals, images, hooks, plans, compact_events).
		return len(path) == 1 && path[0] == "capabilities"
	}
	rules.Prose = func(path []string, parent *golden.Object) bool {
		// The fixed texts of a running task's result (started, moved to
		// the background) are prose; finished results are data.
		if len(path) == 2 && path[0] == "result" && path[1] == "content" && parent != nil {
			if d, ok := parent.Values["details"].(*golden.Object); ok && d.String("status") == "running" {
				return true
			}
		}
		return prose(path, parent)
	}
	n := len(wl)
	if len(gl) != n {
		t.Errorf("want %d lines, got %d", len(wl), len(gl))
		if len(gl) < n {
			n = len(gl)
		}
	}
	for i := 0; i < n; i++ {
		w, err := golden.Parse(wl[i])
		if err != nil {
			t.Fatalf("reference line %d: %v", i+1, err)
		}
		g, err := golden.Parse(gl[i])
		if err != nil {
			t.Fatalf("our line %d: %v", i+1, err)
		}
		if d := golden.CompareShape(w, g, rules); len(d) > 0 {
			t.Errorf("line %d (%s) differs:\n  %s\n  want: %s\n  got:  %s", i+1, typeOf(w), strings.Join(d, "\n  "), clip(wl[i]), clip(gl[i]))
		}
	}
	if t.Failed() {
		t.Logf("our transcript:\n%s", got)
	}
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func typeOf(v golden.Value) string {
	if o, ok := v.(*golden.Object); ok {
		s, _ := json.Marshal(o.String("type") + " " + o.String("command"))
		return string(s)
	}
	return "?"
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

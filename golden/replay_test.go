package golden_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/golden"
)

var update = os.Getenv("UPDATE_GOLDEN") == "1"

// TestFixtures plays every fixture under test/fixtures/rpc and
// test/fixtures/acp once (playFixture) and compares the normalised
// transcript with out.jsonl; the checks other tests registered on a
// fixture (afterFixture) run on that same play.
func TestFixtures(t *testing.T) {
	dirs, err := filepath.Glob("../test/fixtures/rpc/*")
	acp, aerr := filepath.Glob("../test/fixtures/acp/*")
	if err != nil || aerr != nil || len(dirs) == 0 || len(acp) == 0 {
		t.Fatalf("no fixtures: %v %v", err, aerr)
	}
	played := map[string]bool{}
	for _, dir := range append(dirs, acp...) {
		key := fixtureKey(dir)
		played[key] = true
		if by := playedElsewhere[key]; by != "" {
			continue // played once, by that test
		}
		name := filepath.Base(dir)
		if filepath.Base(filepath.Dir(dir)) == "acp" {
			name = "acp-" + name
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			playFixture(t, dir)
		})
	}
	for key := range fixtureChecks {
		if kind, _, _ := strings.Cut(key, "/"); (kind == "rpc" || kind == "acp") && !played[key] {
			t.Errorf("a check is registered on fixture %s, which does not exist", key)
		}
	}
}

// playedElsewhere are the rpc fixtures a test of their own plays (with
// playFixture, so with the same checks) instead of TestFixtures: the
// process environment they need cannot be set beside parallel tests.
var playedElsewhere = map[string]string{
	"rpc/bash-no-provider-key": "TestBashDoesNotSeeProviderKey",
}

// fixtureCheck is a check a test adds to a fixture's one play.
type fixtureCheck struct {
	name  string
	check func(t *testing.T, r *golden.Run, c *golden.Case)
}

// fixtureChecks are the registered checks by fixture (kind/name under
// test/fixtures, fixtureKey).
var fixtureChecks = map[string][]fixtureCheck{}

// afterFixture registers check on the play of fixture (kind/name):
// playFixture runs it, as the subtest name, once the transcript has been
// compared; it reads what the run left (its lines, stderr, files). Used
// as `var _ = afterFixture(...)` beside the test's comment, so a
// fixture is played once per suite run however many tests look at it.
func afterFixture(fixture, name string, check func(t *testing.T, r *golden.Run, c *golden.Case)) bool {
	fixtureChecks[fixture] = append(fixtureChecks[fixture], fixtureCheck{name, check})
	return true
}

// fixtureKey is dir's kind/name ("rpc/prompt").
func fixtureKey(dir string) string {
	return filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
}

// playFixture is the one play of a fixture with an out.jsonl: the run
// (golden.RunCase: exit code, absent/expect side effects, every stdout
// line and session file checked against the schema), each line one valid
// UTF-8 JSON value, the transcript equal to out.jsonl, the replay kit's
// comparison on it (golden.KitChecks), then the registered checks.
func playFixture(t *testing.T, dir string) (*golden.Run, *golden.Case, []byte) {
	t.Helper()
	r, c, got := golden.RunCase(t, dir)
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
	} else {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
		}
		want = golden.MergeTranscript(want)
		if !bytes.Equal(want, got) {
			t.Errorf("transcript differs from %s (UPDATE_GOLDEN=1 rewrites it)\n%s\nstderr:\n%s", path, lineDiff(want, got), r.Stderr())
		} else {
			for _, p := range golden.KitChecks(want, got) {
				t.Error(p)
			}
		}
	}
	for _, fc := range fixtureChecks[fixtureKey(dir)] {
		t.Run(fc.name, func(t *testing.T) { fc.check(t, r, c) })
	}
	return r, c, got
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

package robust_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeLinearSession writes a session file of n custom entries, each the
// child of the one before, for the directory cwd.
func writeLinearSession(t testing.TB, cwd string, n int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":1,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2026-01-01T00:00:00.000Z","cwd":%q}`+"\n", cwd)
	parent := "null"
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("e%07d", i)
		fmt.Fprintf(&b, `{"type":"custom","customType":"x","data":{},"id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:00.001Z"}`+"\n", id, parent)
		parent = `"` + id + `"`
	}
	path := filepath.Join(t.TempDir(), "linear.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// get_tree on a linear branch of 100,000 entries is answered (the nested
// result is 100,000 levels deep, ten times encoding/json's limit).
func TestGetTreeOfALongLinearSession(t *testing.T) {
	const n = 100000
	work := t.TempDir()
	if r, err := filepath.EvalSymlinks(work); err == nil {
		work = r
	}
	path := writeLinearSession(t, work, n)
	p := start(t, procConfig{args: []string{"--model", "fake/echo", "--session", path, "--cwd", work}})
	p.send(`{"id":"t","type":"get_tree"}`)
	p.waitFor("the get_tree response", 60*time.Second, response("t"))
	p.mu.Lock()
	var raw []byte
	for i, d := range p.decoded {
		if d.ID == "t" {
			raw = p.lines[i]
		}
	}
	p.mu.Unlock()
	if r := decode(raw); !r.Success {
		t.Fatalf("get_tree failed: %s", clip(raw))
	}
	// Walk the nesting without encoding/json (which stops at 10000 levels).
	depth, maxDepth := 0, 0
	inStr, esc := false, false
	for _, c := range raw {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '{' || c == '['):
			depth++
			maxDepth = max(maxDepth, depth)
		case !inStr && (c == '}' || c == ']'):
			depth--
		}
	}
	entries := strings.Count(string(raw), `"customType":"x"`)
	t.Logf("get_tree of %d linear entries: %d bytes, nesting depth %d", n, len(raw), maxDepth)
	if depth != 0 || entries != n || maxDepth < 2*n {
		t.Fatalf("tree: %d custom entries, final depth %d, max depth %d", entries, depth, maxDepth)
	}
	if bad := p.badLines(); len(bad) > 0 {
		t.Fatalf("lines that are not valid UTF-8 JSON: %v", bad)
	}
	_ = p.stdin.Close()
	if code, _ := p.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

package permlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestProgram(t *testing.T) {
	for in, want := range map[string]string{
		"git": "git", "python3.12": "python3.12", "g++": "g++", "": "",
		"sk9f8e7d6c5b4a3210ff": "other", "ghp_abcdef123456": "other", "AKIA": "other", ".hidden": "other",
		"token-1234567": "other", strings.Repeat("a", 33): "other", "rm": "rm", "x/y": "other", "deadbeefcafe": "other",
	} {
		if got := Program(in); got != want {
			t.Errorf("Program(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPathClass(t *testing.T) {
	const root, home = "/home/u/proj", "/home/u"
	for in, want := range map[string]string{
		"/home/u/proj/a.go": PathProject, "/home/u/.ssh/id_rsa": PathSecret, "/home/u/proj/.env": PathSecret,
		"/home/u/notes.txt": PathHome, "/tmp/x": PathTemp, "/etc/hosts": PathSystem, "": PathUnresolved, "rel/x": PathUnresolved,
		"/data/ama/sessions/x.jsonl": PathSecret,
	} {
		if got := PathClass(in, root, home, []string{"/data/ama/sessions"}); got != want {
			t.Errorf("PathClass(%q) = %q, want %q", in, got, want)
		}
	}
}

// The tracker keeps at most MaxRejectionKeys counts, forgets the oldest
// first, and holds hashes only.
func TestRejectionsBounded(t *testing.T) {
	var r Rejections
	if r.Reject("a") != 1 || r.Reject("a") != 2 || r.Count("a") != 2 {
		t.Fatal("counts")
	}
	for i := range MaxRejectionKeys + 10 {
		r.Reject("k" + strconv.Itoa(i))
	}
	if r.Len() != MaxRejectionKeys {
		t.Errorf("%d keys kept, want %d", r.Len(), MaxRejectionKeys)
	}
	if r.Count("a") != 0 || r.Count("k0") != 0 || r.Count("k"+strconv.Itoa(MaxRejectionKeys+9)) != 1 {
		t.Error("the oldest keys were not the ones forgotten")
	}
}

func TestCountersAndRecent(t *testing.T) {
	var c Counters
	var d Recent
	recs := []Record{
		{Effect: "allow", Votes: []Vote{{Layer: "rule", Vote: "allow", Step: "static"}}},
		{Effect: "allow", Votes: []Vote{{Layer: "rule", Vote: "classify", Step: "classifier"}, {Layer: "classifier", Vote: "allow", Stage: "fast"}}},
		{Effect: "deny", Code: CodeDeclined, Votes: []Vote{{Layer: "rule", Vote: "ask"}, {Layer: "person", Vote: "deny"}}, Shadow: &Shadow{Differs: true}},
		{Effect: "deny", Code: CodeDenyRule, Votes: []Vote{{Layer: "hook", Vote: "allow"}, {Layer: "rule", Vote: "deny", Step: "deny-rule"}}},
	}
	for i := range recs {
		c.Add(&recs[i])
		d.Add(&recs[i])
	}
	s := c.Snapshot()
	if s.Allowed != 2 || s.Denied != 2 || s.Asked != 1 || s.ShadowDiffers != 1 ||
		s.ByLayer["rule/static"]["allow"] != 1 || s.ByLayer["classifier"]["allow"] != 1 || s.ByLayer["person"]["deny"] != 1 ||
		s.ByLayer["rule/deny-rule"]["deny"] != 1 || s.ByStage["fast"]["allow"] != 1 {
		t.Errorf("counts %+v", s)
	}
	if l := d.List(); len(l) != 2 || l[0].Code != CodeDeclined || l[1].Code != CodeDenyRule {
		t.Errorf("recent %+v", l)
	}
	for range MaxRecent + 5 {
		d.Add(&recs[2])
	}
	if len(d.List()) != MaxRecent {
		t.Errorf("recent keeps %d", len(d.List()))
	}
}

func TestLog(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "permission.log")
	l, err := OpenLog(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := l.Append(&Record{V: Version, ToolCallID: strconv.Itoa(i), Effect: "allow"}); err != nil {
			t.Fatal(err)
		}
	}
	l.FailWith(func() error { return errors.New("disk full") })
	if err := l.Append(&Record{}); !errors.Is(err, ErrLogWrite) {
		t.Errorf("injected failure: %v", err)
	}
	l.Close()
	if err := l.Append(&Record{}); !errors.Is(err, ErrLogWrite) {
		t.Errorf("after close: %v", err)
	}
	f, _ := os.Open(p)
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.ToolCallID != strconv.Itoa(n) {
			t.Errorf("line %d: %s", n, sc.Text())
		}
	}
	if n != 3 {
		t.Errorf("%d lines", n)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	// A link planted at the path is refused, never written through.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, nil, 0o600)
	link := filepath.Join(dir, "link.log")
	os.Symlink(target, link)
	if _, err := OpenLog(link); err == nil {
		t.Error("opened a log through a symlink")
	}
	if _, err := OpenLog("relative.log"); err == nil {
		t.Error("opened a relative log path")
	}
}

// BenchmarkRecord: what recording costs per decision without the log
// (counters, tracker, recent) and with it (marshal, write, fsync).
func BenchmarkRecord(b *testing.B) {
	rec := &Record{V: Version, Time: "2026-01-02T03:04:05.000Z", SessionID: "00000000-0000-4000-8000-000000000001", ToolCallID: "call_1",
		Mode: "auto", Gate: "enforce", Shape: Shape{Tool: "bash", Class: "execute", Programs: []string{"git", "grep"}, Paths: []string{"project"}},
		Votes: []Vote{{Layer: "rule", Vote: "classify", Step: "classifier"}, {Layer: "classifier", Vote: "allow", Stage: "single", LatencyMs: 120}}, Effect: "allow"}
	b.Run("log off", func(b *testing.B) {
		var c Counters
		var d Recent
		for b.Loop() {
			c.Add(rec)
			d.Add(rec)
		}
	})
	b.Run("log on", func(b *testing.B) {
		l, err := OpenLog(filepath.Join(b.TempDir(), "permission.log"))
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		var c Counters
		for b.Loop() {
			c.Add(rec)
			if err := l.Append(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
}

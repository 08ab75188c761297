package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/armadra/ama-rpc/checkpoint"
	"github.com/google/go-cmp/cmp"
)

func TestTurnRecordsFirstStateOnly(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "v1\n", 0o644)
	outside := filepath.Join(filepath.Dir(e.cwd), "outside.txt")
	turn := checkpoint.NewTurn(e.store, e.cwd)

	rec, first, err := turn.BeforeChange(e.path("a.txt"))
	if err != nil || !first || rec.Blob == nil || *rec.Blob != sha("v1\n") {
		t.Fatalf("first BeforeChange = %+v, %v, %v", rec, first, err)
	}
	e.write("a.txt", "v2\n", 0o644)
	rec2, first, err := turn.BeforeChange(e.path("a.txt"))
	if err != nil || first || rec2.Blob == nil || *rec2.Blob != sha("v1\n") {
		t.Fatalf("second BeforeChange = %+v, %v, %v; want the v1 record", rec2, first, err)
	}
	// A relative path and an unclean path name the same file.
	if _, first, _ := turn.BeforeChange("a.txt"); first {
		t.Error("relative path recorded again")
	}
	if _, first, _ := turn.BeforeChange(e.cwd + "/sub/../a.txt"); first {
		t.Error("unclean path recorded again")
	}
	turn.After(e.path("a.txt"))
	e.change(turn, func() { e.write("new/b.txt", "b\n", 0o600) }, "new/b.txt")
	e.change(turn, func() {
		if err := os.WriteFile(outside, []byte("o"), 0o644); err != nil {
			t.Fatal(err)
		}
	}, "../outside.txt")
	e.change(turn, func() { e.remove("a.txt") }, "a.txt") // deleted later in the turn
	turn.After(e.path("untracked.txt"))                   // ignored

	want := map[string]checkpoint.Record{
		"a.txt":     {Blob: ptr(sha("v1\n")), Mode: 0o644, Size: 3, RealParentDir: e.cwd, After: checkpoint.AfterAbsent},
		"new/b.txt": {RealParentDir: e.path("new"), After: sha("b\n")},
		outside:     {RealParentDir: filepath.Dir(e.cwd), After: sha("o")},
	}
	if diff := cmp.Diff(want, turn.Files()); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
}

// TestTurnConcurrent: many goroutines change the same files; each path is
// recorded once, every caller gets that record, and no change made after
// BeforeChange returned leaks into it.
func TestTurnConcurrent(t *testing.T) {
	e := newEnv(t)
	const paths, workers = 5, 40
	for i := range paths {
		e.write(fmt.Sprintf("f%d", i), fmt.Sprintf("original %d\n", i), 0o644)
	}
	turn := checkpoint.NewTurn(e.store, e.cwd)
	var firsts [paths]atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			i := w % paths
			p := e.path(fmt.Sprintf("f%d", i))
			rec, first, err := turn.BeforeChange(p)
			if err != nil {
				errs <- err
				return
			}
			if first {
				firsts[i].Add(1)
			}
			if rec.Blob == nil || *rec.Blob != sha(fmt.Sprintf("original %d\n", i)) {
				errs <- fmt.Errorf("worker %d got %+v", w, rec)
			}
			if err := os.WriteFile(p, fmt.Appendf(nil, "worker %d\n", w), 0o644); err != nil {
				errs <- err
			}
			turn.After(p)
			_ = turn.Files() // readers alongside writers
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	files := turn.Files()
	if len(files) != paths {
		t.Errorf("Files has %d paths, want %d", len(files), paths)
	}
	for i := range paths {
		if n := firsts[i].Load(); n != 1 {
			t.Errorf("f%d: first reported %d times", i, n)
		}
		rec := files[fmt.Sprintf("f%d", i)]
		if rec.Blob == nil || *rec.Blob != sha(fmt.Sprintf("original %d\n", i)) {
			t.Errorf("f%d: record %+v", i, rec)
		}
		if rec.After == "" || rec.After == checkpoint.AfterAbsent {
			t.Errorf("f%d: After = %q", i, rec.After)
		}
	}
}

func TestUnion(t *testing.T) {
	turn2 := map[string]checkpoint.Record{
		"a": {Blob: ptr("a0"), After: "a2"},
		"b": {Blob: nil, After: "b2"},
	}
	turn3 := map[string]checkpoint.Record{
		"a": {Blob: ptr("a2"), After: "a3"},
		"c": {Blob: ptr("c0"), After: checkpoint.AfterAbsent},
	}
	turn4 := map[string]checkpoint.Record{
		"b": {Blob: ptr("b2")}, // After unknown: the older one is stale
	}
	want := map[string]checkpoint.Record{
		"a": {Blob: ptr("a0"), After: "a3"},
		"b": {Blob: nil},
		"c": {Blob: ptr("c0"), After: checkpoint.AfterAbsent},
	}
	if diff := cmp.Diff(want, checkpoint.Union(turn2, turn3, turn4)); diff != "" {
		t.Errorf("Union (-want +got):\n%s", diff)
	}
	if got := checkpoint.Union(); got == nil || len(got) != 0 {
		t.Errorf("Union() = %v, want empty map", got)
	}
}

func TestAfterStates(t *testing.T) {
	e := newEnv(t)
	e.store = checkpoint.NewStore(e.data, 4)
	tests := []struct {
		name   string
		change func()
		want   string
	}{
		{"regular", func() { e.write("f", "abc", 0o644) }, sha("abc")},
		{"larger than the cap is still hashed", func() { e.write("f", "abcdefgh", 0o644) }, sha("abcdefgh")},
		{"empty", func() { e.write("f", "", 0o644) }, sha("")},
		{"absent", func() { e.remove("f") }, checkpoint.AfterAbsent},
		{"symlink is unknown", func() { e.remove("f"); e.write("t", "x", 0o644); os.Symlink("t", e.path("f")) }, ""},
		{"directory is unknown", func() { e.remove("f"); os.Mkdir(e.path("f"), 0o755) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := checkpoint.NewTurn(e.store, e.cwd)
			e.change(turn, tt.change, "f")
			if got := turn.Files()["f"].After; got != tt.want {
				t.Errorf("After = %q, want %q", got, tt.want)
			}
		})
	}
}

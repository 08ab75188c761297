package checkpoint_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/armadra/ama-rpc/checkpoint"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// agentTurn runs one turn: fn changes files through e.change.
func (e *env) agentTurn(fn func(turn *checkpoint.Turn)) map[string]checkpoint.Record {
	turn := checkpoint.NewTurn(e.store, e.cwd)
	fn(turn)
	return turn.Files()
}

func (e *env) mustFile(rel, content string, mode os.FileMode) {
	e.t.Helper()
	fi, err := os.Lstat(e.path(rel))
	if err != nil {
		e.t.Errorf("%s: %v", rel, err)
		return
	}
	if got := e.read(rel); got != content {
		e.t.Errorf("%s = %q, want %q", rel, got, content)
	}
	if fi.Mode() != mode {
		e.t.Errorf("%s mode = %v, want %v", rel, fi.Mode(), mode)
	}
}

func (e *env) mustAbsent(rel string) {
	e.t.Helper()
	if _, err := os.Lstat(e.path(rel)); !os.IsNotExist(err) {
		e.t.Errorf("%s exists (%v), want it absent", rel, err)
	}
}

func (e *env) symlink(target, rel string) {
	e.t.Helper()
	if err := os.Symlink(target, e.path(rel)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) rename(from, to string) {
	e.t.Helper()
	if err := os.Rename(e.path(from), e.path(to)); err != nil {
		e.t.Fatal(err)
	}
}

func TestRestore(t *testing.T) {
	overwrite := checkpoint.RestoreOptions{OnConflict: checkpoint.OnConflictOverwrite}
	tests := []struct {
		name  string
		setup func(e *env) map[string]checkpoint.Record
		opt   checkpoint.RestoreOptions
		want  checkpoint.Result
		check func(e *env)
	}{
		{
			name: "edited file gets content and mode back",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "one\ntwo\nthree\n", 0o640)
				return e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("a.txt", "one\n2\nthree\nfour\n", 0o755) }, "a.txt")
				})
			},
			want:  checkpoint.Result{Restored: []string{"a.txt"}, Insertions: 1, Deletions: 2},
			check: func(e *env) { e.mustFile("a.txt", "one\ntwo\nthree\n", 0o640) },
		},
		{
			name: "file the turn created is deleted",
			setup: func(e *env) map[string]checkpoint.Record {
				return e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("c.txt", "gamma\n", 0o644) }, "c.txt")
				})
			},
			want:  checkpoint.Result{Deleted: []string{"c.txt"}, Deletions: 1},
			check: func(e *env) { e.mustAbsent("c.txt") },
		},
		{
			name: "file the turn deleted is recreated",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "x\ny", 0o600)
				return e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.remove("a.txt") }, "a.txt")
				})
			},
			want:  checkpoint.Result{Restored: []string{"a.txt"}, Insertions: 2},
			check: func(e *env) { e.mustFile("a.txt", "x\ny", 0o600) },
		},
		{
			name: "file in a deleted directory is recreated with its parents",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("dir/sub/f.txt", "f\n", 0o644)
				return e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.remove("dir") }, "dir/sub/f.txt")
				})
			},
			want:  checkpoint.Result{Restored: []string{"dir/sub/f.txt"}, Insertions: 1},
			check: func(e *env) { e.mustFile("dir/sub/f.txt", "f\n", 0o644) },
		},
		{
			name: "earliest state wins over later turns",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "v1\n", 0o644)
				t2 := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("a.txt", "v2\n", 0o644) }, "a.txt")
				})
				t3 := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("a.txt", "v3\n", 0o644) }, "a.txt")
					e.change(turn, func() { e.write("b.txt", "b\n", 0o644) }, "b.txt")
				})
				return checkpoint.Union(t2, t3)
			},
			want: checkpoint.Result{Restored: []string{"a.txt"}, Deleted: []string{"b.txt"}, Insertions: 1, Deletions: 2},
			check: func(e *env) {
				e.mustFile("a.txt", "v1\n", 0o644)
				e.mustAbsent("b.txt")
			},
		},
		{
			name: "conflict is left untouched with skip",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "orig\n", 0o644)
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("a.txt", "agent\n", 0o644) }, "a.txt")
				})
				e.write("a.txt", "user\n", 0o644)
				return files
			},
			want:  checkpoint.Result{Conflicts: []string{"a.txt"}},
			check: func(e *env) { e.mustFile("a.txt", "user\n", 0o644) },
		},
		{
			name: "conflict is overwritten with overwrite",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "orig\n", 0o644)
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("a.txt", "agent\n", 0o644) }, "a.txt")
				})
				e.write("a.txt", "user\n", 0o644)
				return files
			},
			opt:   overwrite,
			want:  checkpoint.Result{Restored: []string{"a.txt"}, Conflicts: []string{"a.txt"}, Insertions: 1, Deletions: 1},
			check: func(e *env) { e.mustFile("a.txt", "orig\n", 0o644) },
		},
		{
			name: "file the user recreated after the agent deleted it is a conflict",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "orig\n", 0o644)
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.remove("a.txt") }, "a.txt")
				})
				e.write("a.txt", "user\n", 0o644)
				return files
			},
			want:  checkpoint.Result{Conflicts: []string{"a.txt"}},
			check: func(e *env) { e.mustFile("a.txt", "user\n", 0o644) },
		},
		{
			name: "created file the user edited is a conflict, deleted with overwrite",
			setup: func(e *env) map[string]checkpoint.Record {
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("c.txt", "agent\n", 0o644) }, "c.txt")
				})
				e.write("c.txt", "user\nmore\n", 0o644)
				return files
			},
			opt:   overwrite,
			want:  checkpoint.Result{Deleted: []string{"c.txt"}, Conflicts: []string{"c.txt"}, Deletions: 2},
			check: func(e *env) { e.mustAbsent("c.txt") },
		},
		{
			name: "record without After is never a conflict",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "orig\n", 0o644)
				turn := checkpoint.NewTurn(e.store, e.cwd)
				turn.BeforeChange(e.path("a.txt"))
				e.write("a.txt", "someone\n", 0o644)
				return turn.Files()
			},
			want:  checkpoint.Result{Restored: []string{"a.txt"}, Insertions: 1, Deletions: 1},
			check: func(e *env) { e.mustFile("a.txt", "orig\n", 0o644) },
		},
		{
			name: "file already in its recorded state is not listed",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "orig\n", 0o644)
				return e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("a.txt", "agent\n", 0o644) }, "a.txt")
					e.change(turn, func() { e.write("a.txt", "orig\n", 0o644) }, "a.txt")
					e.change(turn, func() { e.write("tmp", "t", 0o644); e.remove("tmp") }, "tmp")
				})
			},
			want:  checkpoint.Result{},
			check: func(e *env) { e.mustFile("a.txt", "orig\n", 0o644) },
		},
		{
			name: "user reverting a file by hand is not a conflict",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "orig\n", 0o644)
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("a.txt", "agent\n", 0o644) }, "a.txt")
				})
				e.write("a.txt", "orig\n", 0o644)
				return files
			},
			want: checkpoint.Result{},
		},
		{
			name: "mode-only change is restored",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("run.sh", "echo\n", 0o644)
				return e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { os.Chmod(e.path("run.sh"), 0o755) }, "run.sh")
				})
			},
			want:  checkpoint.Result{Restored: []string{"run.sh"}},
			check: func(e *env) { e.mustFile("run.sh", "echo\n", 0o644) },
		},
		{
			name: "missing blob is backup_missing",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "orig\n", 0o644)
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("a.txt", "agent\n", 0o644) }, "a.txt")
				})
				if err := os.RemoveAll(filepath.Join(e.data, "blobs")); err != nil {
					e.t.Fatal(err)
				}
				return files
			},
			want:  checkpoint.Result{Skipped: []checkpoint.Skip{{Path: "a.txt", Reason: checkpoint.SkipBackupMissing}}},
			check: func(e *env) { e.mustFile("a.txt", "agent\n", 0o644) },
		},
		{
			name: "parent replaced by a symlink is parent_moved",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("d/f.txt", "orig\n", 0o644)
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("d/f.txt", "agent\n", 0o644) }, "d/f.txt")
					e.change(turn, func() { e.write("d/new.txt", "new\n", 0o644) }, "d/new.txt")
				})
				e.rename("d", "d2")
				e.symlink("d2", "d")
				return files
			},
			want: checkpoint.Result{Skipped: []checkpoint.Skip{
				{Path: "d/f.txt", Reason: checkpoint.SkipParentMoved},
				{Path: "d/new.txt", Reason: checkpoint.SkipParentMoved},
			}},
			check: func(e *env) {
				e.mustFile("d2/f.txt", "agent\n", 0o644)
				e.mustFile("d2/new.txt", "new\n", 0o644)
			},
		},
		{
			name: "parent replaced by a file is parent_moved",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("d/f.txt", "orig\n", 0o644)
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("d/f.txt", "agent\n", 0o644) }, "d/f.txt")
				})
				e.remove("d")
				e.write("d", "a file\n", 0o644)
				return files
			},
			want:  checkpoint.Result{Skipped: []checkpoint.Skip{{Path: "d/f.txt", Reason: checkpoint.SkipParentMoved}}},
			check: func(e *env) { e.mustFile("d", "a file\n", 0o644) },
		},
		{
			name: "missing ancestor now a dangling symlink is parent_moved",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("d/f.txt", "orig\n", 0o644)
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.remove("d") }, "d/f.txt")
				})
				e.symlink("nowhere", "d")
				return files
			},
			want:  checkpoint.Result{Skipped: []checkpoint.Skip{{Path: "d/f.txt", Reason: checkpoint.SkipParentMoved}}},
			check: func(e *env) { e.mustAbsent("nowhere") },
		},
		{
			name: "record without realParentDir and a symlinked parent is parent_moved",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("elsewhere/x", "precious\n", 0o644)
				e.symlink("elsewhere", "d")
				return map[string]checkpoint.Record{"d/x": {}}
			},
			want:  checkpoint.Result{Skipped: []checkpoint.Skip{{Path: "d/x", Reason: checkpoint.SkipParentMoved}}},
			check: func(e *env) { e.mustFile("elsewhere/x", "precious\n", 0o644) },
		},
		{
			name: "current symlink, fifo and hardlink are skipped; too_large passes through",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("ln", "orig\n", 0o644)
				e.write("fifo", "orig\n", 0o644)
				e.write("hard", "orig\n", 0o644)
				e.store = checkpoint.NewStore(e.data, 10)
				e.write("big", "more than ten bytes\n", 0o644)
				return e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.remove("ln"); e.symlink("hard", "ln") }, "ln")
					e.change(turn, func() {
						e.remove("fifo")
						if err := syscall.Mkfifo(e.path("fifo"), 0o644); err != nil {
							e.t.Fatal(err)
						}
					}, "fifo")
					e.change(turn, func() {
						if err := os.Link(e.path("hard"), e.path("hard2")); err != nil {
							e.t.Fatal(err)
						}
						e.write("hard", "changed\n", 0o644) // in place: both names change
					}, "hard")
					e.change(turn, func() { e.write("big", "changed\n", 0o644) }, "big")
				})
			},
			opt: overwrite,
			want: checkpoint.Result{Skipped: []checkpoint.Skip{
				{Path: "big", Reason: checkpoint.SkipTooLarge},
				{Path: "fifo", Reason: checkpoint.SkipNotRegular},
				{Path: "hard", Reason: checkpoint.SkipHardlink},
				{Path: "ln", Reason: checkpoint.SkipSymlink},
			}},
			check: func(e *env) { e.mustFile("big", "changed\n", 0o644) },
		},
		{
			name: "paths are keys, sorted; outside cwd absolute",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("z.txt", "z\n", 0o644)
				e.write("a/b.txt", "b\n", 0o644)
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("z.txt", "Z\n", 0o644) }, "z.txt")
					e.change(turn, func() { e.write("a/b.txt", "B\n", 0o644) }, "a/b.txt")
					e.change(turn, func() { e.write("../out.txt", "out\n", 0o644) }, "../out.txt")
					e.change(turn, func() { e.write("m.txt", "m\n", 0o644) }, "m.txt")
				})
				// An absolute key inside cwd is reported relative.
				files[e.path("m.txt")] = files["m.txt"]
				delete(files, "m.txt")
				return files
			},
			want: checkpoint.Result{
				Restored:   []string{"a/b.txt", "z.txt"},
				Deleted:    nil, // filled in by the test: [<abs out.txt>, "m.txt"]
				Insertions: 2, Deletions: 4,
			},
			check: func(e *env) {
				e.mustFile("z.txt", "z\n", 0o644)
				e.mustFile("a/b.txt", "b\n", 0o644)
				e.mustAbsent("m.txt")
				e.mustAbsent("../out.txt")
			},
		},
		{
			name: "unreadable blob is failed",
			setup: func(e *env) map[string]checkpoint.Record {
				e.write("a.txt", "orig\n", 0o644)
				files := e.agentTurn(func(turn *checkpoint.Turn) {
					e.change(turn, func() { e.write("a.txt", "agent\n", 0o644) }, "a.txt")
				})
				p, _ := e.store.BlobPath(sha("orig\n"))
				if err := os.Remove(p); err != nil {
					e.t.Fatal(err)
				}
				if err := os.Mkdir(p, 0o700); err != nil {
					e.t.Fatal(err)
				}
				return files
			},
			want:  checkpoint.Result{Failed: []checkpoint.Failure{{Path: "a.txt", Message: "<any>"}}},
			check: func(e *env) { e.mustFile("a.txt", "agent\n", 0o644) },
		},
	}
	ignoreMessage := cmp.Comparer(func(a, b checkpoint.Failure) bool {
		return a.Path == b.Path && (a.Message == "<any>" || b.Message == "<any>" || a.Message == b.Message)
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			files := tt.setup(e)
			want := tt.want
			if strings.HasPrefix(tt.name, "paths are keys") {
				want.Deleted = []string{filepath.Join(filepath.Dir(e.cwd), "out.txt"), "m.txt"}
			}
			root := filepath.Dir(e.cwd)
			before := tree(t, root)

			dryOpt := tt.opt
			dryOpt.DryRun = true
			dry := e.store.Restore(e.cwd, files, dryOpt)
			if diff := cmp.Diff(before, tree(t, root)); diff != "" {
				t.Errorf("dry run changed the tree (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(want, dry, cmpopts.EquateEmpty(), ignoreMessage); diff != "" {
				t.Errorf("dry run result (-want +got):\n%s", diff)
			}

			got := e.store.Restore(e.cwd, files, tt.opt)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), ignoreMessage); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if tt.check != nil {
				tt.check(e)
			}
			// No temporary files are left next to restored files.
			for p := range tree(t, root) {
				if strings.Contains(p, ".ama-restore-") {
					t.Errorf("temporary file left: %s", p)
				}
			}
			// Restoring again finds nothing more to do (except what stays skipped or conflicting).
			again := e.store.Restore(e.cwd, files, tt.opt)
			if len(again.Restored)+len(again.Deleted) != 0 && len(got.Conflicts) == 0 {
				t.Errorf("second restore still changes files: %+v", again)
			}
		})
	}
}

func TestResultJSON(t *testing.T) {
	b, err := json.Marshal(checkpoint.Result{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"restored":[],"deleted":[],"conflicts":[],"skipped":[],"failed":[],"insertions":0,"deletions":0}`
	if string(b) != want {
		t.Errorf("zero Result = %s\nwant %s", b, want)
	}
	e := newEnv(t)
	b, err = json.Marshal(e.store.Restore(e.cwd, nil, checkpoint.RestoreOptions{}))
	if err != nil || string(b) != want {
		t.Errorf("empty Restore = %s, %v", b, err)
	}
	r := checkpoint.Result{
		Restored:  []string{"a"},
		Skipped:   []checkpoint.Skip{{Path: "b", Reason: "symlink"}},
		Failed:    []checkpoint.Failure{{Path: "c", Message: "boom"}},
		Conflicts: []string{"a"}, Insertions: 3,
	}
	b, _ = json.Marshal(r)
	want = `{"restored":["a"],"deleted":[],"conflicts":["a"],"skipped":[{"path":"b","reason":"symlink"}],"failed":[{"path":"c","message":"boom"}],"insertions":3,"deletions":0}`
	if string(b) != want {
		t.Errorf("Result = %s\nwant %s", b, want)
	}
}

func TestResultHelpers(t *testing.T) {
	tests := []struct {
		name      string
		r         checkpoint.Result
		allFailed bool
		changed   []string
	}{
		{"empty", checkpoint.Result{}, false, nil},
		{"only failures", checkpoint.Result{Failed: []checkpoint.Failure{{Path: "a"}}, Skipped: []checkpoint.Skip{{Path: "b"}}}, true, nil},
		{"failure and a restore", checkpoint.Result{Failed: []checkpoint.Failure{{Path: "a"}}, Restored: []string{"b"}}, false, []string{"b"}},
		{"failure and a delete", checkpoint.Result{Failed: []checkpoint.Failure{{Path: "a"}}, Deleted: []string{"c"}}, false, []string{"c"}},
		{"changed is a sorted union", checkpoint.Result{Restored: []string{"z", "a"}, Deleted: []string{"m"}, Conflicts: []string{"a", "q"}}, false, []string{"a", "m", "q", "z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.AllFailed(); got != tt.allFailed {
				t.Errorf("AllFailed = %v", got)
			}
			if diff := cmp.Diff(tt.changed, tt.r.Changed(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Changed (-want +got):\n%s", diff)
			}
		})
	}
}

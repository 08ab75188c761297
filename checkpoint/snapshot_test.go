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
)

func TestSnapshot(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *env) string // returns the path to snapshot
		want  func(e *env) checkpoint.Record
		blob  string // content expected in the store
	}{
		{
			name: "regular",
			setup: func(e *env) string {
				e.write("a.txt", "one\ntwo\n", 0o640)
				return e.path("a.txt")
			},
			want: func(e *env) checkpoint.Record {
				return checkpoint.Record{Blob: ptr(sha("one\ntwo\n")), Mode: 0o640, Size: 8, RealParentDir: e.cwd}
			},
			blob: "one\ntwo\n",
		},
		{
			name: "setuid and sticky bits",
			setup: func(e *env) string {
				e.write("s.sh", "x", 0o755)
				if err := os.Chmod(e.path("s.sh"), 0o755|os.ModeSetuid|os.ModeSticky); err != nil {
					e.t.Fatal(err)
				}
				return e.path("s.sh")
			},
			want: func(e *env) checkpoint.Record {
				return checkpoint.Record{Blob: ptr(sha("x")), Mode: 0o5755, Size: 1, RealParentDir: e.cwd}
			},
			blob: "x",
		},
		{
			name: "empty",
			setup: func(e *env) string {
				e.write("empty", "", 0o600)
				return e.path("empty")
			},
			want: func(e *env) checkpoint.Record {
				return checkpoint.Record{Blob: ptr(sha("")), Mode: 0o600, RealParentDir: e.cwd}
			},
			blob: "",
		},
		{
			name:  "new file",
			setup: func(e *env) string { return e.path("new.txt") },
			want:  func(e *env) checkpoint.Record { return checkpoint.Record{RealParentDir: e.cwd} },
		},
		{
			name:  "new file in new directories",
			setup: func(e *env) string { return e.path("x/y/new.txt") },
			want: func(e *env) checkpoint.Record {
				return checkpoint.Record{RealParentDir: filepath.Join(e.cwd, "x", "y")}
			},
		},
		{
			name: "through a symlinked directory",
			setup: func(e *env) string {
				e.write("real/f", "f", 0o644)
				if err := os.Symlink("real", e.path("link")); err != nil {
					e.t.Fatal(err)
				}
				return e.path("link/f")
			},
			want: func(e *env) checkpoint.Record {
				return checkpoint.Record{Blob: ptr(sha("f")), Mode: 0o644, Size: 1, RealParentDir: e.path("real")}
			},
			blob: "f",
		},
		{
			name: "symlink",
			setup: func(e *env) string {
				e.write("target", "t", 0o644)
				if err := os.Symlink("target", e.path("ln")); err != nil {
					e.t.Fatal(err)
				}
				return e.path("ln")
			},
			want: func(*env) checkpoint.Record { return checkpoint.Record{Skipped: checkpoint.SkipSymlink} },
		},
		{
			name: "dangling symlink",
			setup: func(e *env) string {
				if err := os.Symlink("nowhere", e.path("ln")); err != nil {
					e.t.Fatal(err)
				}
				return e.path("ln")
			},
			want: func(*env) checkpoint.Record { return checkpoint.Record{Skipped: checkpoint.SkipSymlink} },
		},
		{
			name: "hardlink",
			setup: func(e *env) string {
				e.write("h1", "shared", 0o644)
				if err := os.Link(e.path("h1"), e.path("h2")); err != nil {
					e.t.Fatal(err)
				}
				return e.path("h2")
			},
			want: func(e *env) checkpoint.Record {
				return checkpoint.Record{Mode: 0o644, Size: 6, RealParentDir: e.cwd, Skipped: checkpoint.SkipHardlink}
			},
		},
		{
			name: "fifo",
			setup: func(e *env) string {
				if err := syscall.Mkfifo(e.path("fifo"), 0o644); err != nil {
					e.t.Fatal(err)
				}
				return e.path("fifo")
			},
			want: func(*env) checkpoint.Record { return checkpoint.Record{Skipped: checkpoint.SkipNotRegular} },
		},
		{
			name: "directory",
			setup: func(e *env) string {
				if err := os.Mkdir(e.path("d"), 0o755); err != nil {
					e.t.Fatal(err)
				}
				return e.path("d")
			},
			want: func(*env) checkpoint.Record { return checkpoint.Record{Skipped: checkpoint.SkipNotRegular} },
		},
		{
			name: "too large",
			setup: func(e *env) string {
				e.write("big", strings.Repeat("x", 101), 0o644)
				return e.path("big")
			},
			want: func(e *env) checkpoint.Record {
				return checkpoint.Record{Mode: 0o644, Size: 101, RealParentDir: e.cwd, Skipped: checkpoint.SkipTooLarge}
			},
		},
		{
			name: "at the cap",
			setup: func(e *env) string {
				e.write("cap", strings.Repeat("x", 100), 0o644)
				return e.path("cap")
			},
			want: func(e *env) checkpoint.Record {
				return checkpoint.Record{Blob: ptr(sha(strings.Repeat("x", 100))), Mode: 0o644, Size: 100, RealParentDir: e.cwd}
			},
			blob: strings.Repeat("x", 100),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.store = checkpoint.NewStore(e.data, 100)
			p := tt.setup(e)
			got, err := e.store.Snapshot(p)
			if err != nil {
				t.Fatalf("Snapshot: %v", err)
			}
			if diff := cmp.Diff(tt.want(e), got); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			if got.Blob != nil {
				b, err := e.store.Get(*got.Blob)
				if err != nil || string(b) != tt.blob {
					t.Errorf("blob = %q, %v; want %q", b, err, tt.blob)
				}
			} else if _, err := os.Stat(filepath.Join(e.data, "blobs")); !os.IsNotExist(err) {
				t.Errorf("a record without blob wrote to the store (%v)", err)
			}
		})
	}
}

func TestRecordJSON(t *testing.T) {
	tests := []struct {
		name string
		rec  checkpoint.Record
		want string
	}{
		{"absent", checkpoint.Record{RealParentDir: "/p"}, `{"blob":null,"realParentDir":"/p"}`},
		{"regular", checkpoint.Record{Blob: ptr("ab"), Mode: 0o644, Size: 3, RealParentDir: "/p", After: "cd"},
			`{"blob":"ab","mode":420,"size":3,"realParentDir":"/p","after":"cd"}`},
		{"empty file keeps size 0", checkpoint.Record{Blob: ptr("ab"), Mode: 0o600}, `{"blob":"ab","mode":384,"size":0}`},
		{"too large", checkpoint.Record{Mode: 0o644, Size: 9, Skipped: "too_large"},
			`{"blob":null,"mode":420,"size":9,"skipped":"too_large"}`},
		{"symlink", checkpoint.Record{Skipped: "symlink"}, `{"blob":null,"skipped":"symlink"}`},
		{"deleted by the agent", checkpoint.Record{Blob: ptr("ab"), Mode: 0o644, Size: 1, After: checkpoint.AfterAbsent},
			`{"blob":"ab","mode":420,"size":1,"after":"absent"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(map[string]checkpoint.Record{"f": tt.rec})
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"f":` + tt.want + `}`; string(b) != want {
				t.Errorf("JSON = %s\nwant   %s", b, want)
			}
			var back map[string]checkpoint.Record
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.rec, back["f"]); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKeyPath(t *testing.T) {
	cwd := filepath.FromSlash("/home/u/proj")
	tests := []struct{ abs, key string }{
		{"/home/u/proj/a.txt", "a.txt"},
		{"/home/u/proj/src/x/y.go", "src/x/y.go"},
		{"/home/u/proj/../other/z", "/home/u/other/z"},
		{"/home/u/projector/z", "/home/u/projector/z"},
		{"/home/u/proj", "/home/u/proj"},
		{"/etc/hosts", "/etc/hosts"},
		{"/home/u/proj/..foo", "..foo"},
	}
	for _, tt := range tests {
		abs := filepath.FromSlash(tt.abs)
		if got := checkpoint.Key(cwd, abs); got != tt.key {
			t.Errorf("Key(%q) = %q, want %q", abs, got, tt.key)
		}
		if got, want := checkpoint.Path(cwd, tt.key), filepath.Clean(abs); got != want {
			t.Errorf("Path(%q) = %q, want %q", tt.key, got, want)
		}
	}
}

func TestSnapshotStoreFailure(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(e.data, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.write("a.txt", "a", 0o644)
	turn := checkpoint.NewTurn(e.store, e.cwd)
	rec, first, err := turn.BeforeChange(e.path("a.txt"))
	if err == nil || !first {
		t.Fatalf("BeforeChange = %+v, %v, %v; want an error", rec, first, err)
	}
	want := checkpoint.Record{Mode: 0o644, Size: 1, RealParentDir: e.cwd, Skipped: checkpoint.SkipBackupMissing}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	// The failure is reported once; the record stays.
	if rec2, first, err := turn.BeforeChange(e.path("a.txt")); first || err != nil || rec2.Skipped != checkpoint.SkipBackupMissing {
		t.Errorf("second BeforeChange = %+v, %v, %v", rec2, first, err)
	}
	res := e.store.Restore(e.cwd, turn.Files(), checkpoint.RestoreOptions{})
	if len(res.Skipped) != 1 || res.Skipped[0] != (checkpoint.Skip{Path: "a.txt", Reason: checkpoint.SkipBackupMissing}) {
		t.Errorf("Restore = %+v", res)
	}
}

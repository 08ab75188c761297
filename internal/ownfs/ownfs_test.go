package ownfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const secret = "SECRET-MARKER-ownfs"

// world is a home with a private key, a project inside it and a file
// outside the project.
func world(t *testing.T) (home, project, key string) {
	t.Helper()
	home = t.TempDir()
	project = filepath.Join(home, "proj")
	key = filepath.Join(home, ".ssh", "id_rsa")
	for _, d := range []string{project, filepath.Dir(key), filepath.Join(home, "elsewhere")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(key, []byte(secret), 0o600))
	must(t, os.WriteFile(filepath.Join(home, "elsewhere", "notes.md"), []byte(secret), 0o600))
	must(t, os.WriteFile(filepath.Join(project, "real.md"), []byte("hello"), 0o600))
	return home, project, key
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadIn(t *testing.T) {
	home, project, key := world(t)
	tests := []struct {
		name    string
		root    string
		setup   func(t *testing.T) string // returns the name to read
		want    string                    // content, or "" for a refusal
		wantErr error                     // when refused for a known reason
	}{
		{"plain file", project, func(t *testing.T) string { return "real.md" }, "hello", nil},
		{"link inside the project", project, func(t *testing.T) string {
			must(t, os.Symlink("real.md", filepath.Join(project, "in.md")))
			return "in.md"
		}, "hello", nil},
		{"link to a private key", project, func(t *testing.T) string {
			must(t, os.Symlink(key, filepath.Join(project, "AGENTS.md")))
			return "AGENTS.md"
		}, "", nil},
		{"relative link out of the project", project, func(t *testing.T) string {
			must(t, os.Symlink("../elsewhere/notes.md", filepath.Join(project, "CLAUDE.md")))
			return "CLAUDE.md"
		}, "", nil},
		{"link in a parent directory", project, func(t *testing.T) string {
			must(t, os.Symlink(filepath.Join(home, "elsewhere"), filepath.Join(project, ".ama")))
			return filepath.Join(project, ".ama", "notes.md")
		}, "", nil},
		{"link to the process environment", project, func(t *testing.T) string {
			must(t, os.Symlink("/proc/self/environ", filepath.Join(project, "env.md")))
			return "env.md"
		}, "", nil},
		{"root is the home: secret inside it", home, func(t *testing.T) string {
			must(t, os.Symlink(".ssh/id_rsa", filepath.Join(home, "AGENTS.md")))
			return "AGENTS.md"
		}, "", ErrSecret},
		{"hard link to a key", home, func(t *testing.T) string {
			if err := os.Link(key, filepath.Join(home, "hard.md")); err != nil {
				t.Skipf("hard link: %v", err)
			}
			return "hard.md"
		}, "", ErrHardLink},
		{"fifo", project, func(t *testing.T) string {
			must(t, syscall.Mkfifo(filepath.Join(project, "fifo.md"), 0o600))
			return "fifo.md"
		}, "", ErrNotRegular},
		{"directory", project, func(t *testing.T) string {
			must(t, os.Mkdir(filepath.Join(project, "dir.md"), 0o700))
			return "dir.md"
		}, "", ErrNotRegular},
		{"absolute name outside the root", project, func(t *testing.T) string { return key }, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.setup(t)
			got, err := ReadIn(tt.root, name, 0)
			if tt.want != "" {
				if err != nil || string(got) != tt.want {
					t.Fatalf("ReadIn = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil || strings.Contains(string(got), secret) {
				t.Fatalf("ReadIn = %q, %v; want a refusal", got, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestReadUserRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	must(t, syscall.Mkfifo(p, 0o600))
	if _, err := ReadUser(p, 0); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("ReadUser(fifo) = %v, want ErrNotRegular", err)
	}
	big := filepath.Join(dir, "big.json")
	must(t, os.WriteFile(big, make([]byte, 100), 0o600))
	if _, err := ReadUser(big, 10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadUser(big) = %v, want ErrTooLarge", err)
	}
}

func TestWritesDoNotFollowLinks(t *testing.T) {
	home, project, key := world(t)
	outputs := filepath.Join(home, "tmp", "ama-outputs")
	must(t, os.MkdirAll(outputs, 0o700))
	t.Run("atomic write over a planted link", func(t *testing.T) {
		must(t, os.Symlink(key, filepath.Join(outputs, "r.md")))
		must(t, WriteAtomic(outputs, "r.md", []byte("report")))
		if b, _ := os.ReadFile(key); string(b) != secret {
			t.Fatalf("key changed: %q", b)
		}
		fi, err := os.Lstat(filepath.Join(outputs, "r.md"))
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("r.md not replaced by a regular file: %v %v", fi, err)
		}
	})
	t.Run("new file over a planted link", func(t *testing.T) {
		must(t, os.Symlink(key, filepath.Join(outputs, "n.md")))
		if _, err := CreateNew(outputs, "n.md", 0o600); err == nil {
			t.Fatal("CreateNew followed a link")
		}
		if b, _ := os.ReadFile(key); string(b) != secret {
			t.Fatalf("key changed: %q", b)
		}
	})
	t.Run("directory is a link out of its parent", func(t *testing.T) {
		swapped := filepath.Join(home, "tmp", "plans")
		must(t, os.Symlink(filepath.Dir(key), swapped))
		if err := WriteAtomic(swapped, "x.md", []byte("plan")); err == nil {
			t.Fatal("wrote through a directory link out of its parent")
		}
		if _, _, err := CreateTemp(swapped, "job-*.log"); err == nil {
			t.Fatal("CreateTemp through a directory link out of its parent")
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(key), "x.md")); err == nil {
			t.Fatal("file created in .ssh")
		}
	})
	t.Run("directory link inside its parent", func(t *testing.T) {
		real := filepath.Join(project, "plans-real")
		must(t, os.Mkdir(real, 0o700))
		must(t, os.Symlink("plans-real", filepath.Join(project, "plans")))
		must(t, WriteAtomic(filepath.Join(project, "plans"), "p.md", []byte("plan")))
		if b, err := os.ReadFile(filepath.Join(real, "p.md")); err != nil || string(b) != "plan" {
			t.Fatalf("plan = %q, %v", b, err)
		}
	})
	t.Run("name with a separator", func(t *testing.T) {
		if err := WriteAtomic(outputs, "../x.md", nil); err == nil {
			t.Fatal("WriteAtomic took a path")
		}
	})
}

func TestReadTailReadsTheDescriptor(t *testing.T) {
	home, _, key := world(t)
	dir := filepath.Join(home, "out")
	f, path, err := CreateTemp(dir, "job-j1-*.log")
	must(t, err)
	defer f.Close()
	_, err = f.WriteString("line one\nline two\n")
	must(t, err)
	// The file is swapped for a link to the key after creation.
	must(t, os.Remove(path))
	must(t, os.Symlink(key, path))
	b, size, err := ReadTail(f, 9)
	if err != nil || string(b) != "line two\n" || size != 18 {
		t.Fatalf("ReadTail = %q, %d, %v", b, size, err)
	}
}

func TestWriteAtomicInStaysInRoot(t *testing.T) {
	home, project, key := world(t)
	// .ama is a link out of the project: .ama/worktrees/.gitignore would
	// land in ~/elsewhere.
	must(t, os.Symlink(filepath.Join(home, "elsewhere"), filepath.Join(project, ".ama")))
	if err := WriteAtomicIn(project, ".ama/worktrees/.gitignore", []byte("*\n")); err == nil {
		t.Fatal("wrote through a parent link out of the root")
	}
	if _, err := os.Stat(filepath.Join(home, "elsewhere", "worktrees")); err == nil {
		t.Fatal("created a directory outside the root")
	}
	// A link at the name inside the root is replaced.
	must(t, os.MkdirAll(filepath.Join(project, "plans"), 0o700))
	must(t, os.Symlink(key, filepath.Join(project, "plans", "p.md")))
	must(t, WriteAtomicIn(project, "plans/p.md", []byte("plan")))
	if b, _ := os.ReadFile(key); string(b) != secret {
		t.Fatalf("key changed: %q", b)
	}
	for _, bad := range []string{"../x.md", "/etc/x", "."} {
		if err := WriteAtomicIn(project, bad, nil); err == nil {
			t.Errorf("WriteAtomicIn(%q) succeeded", bad)
		}
	}
}

// ReadUserIn reads files of a directory that is itself a credential store
// (the config directory) and links that leave it for ordinary files, but
// not a link to a credential file.
func TestReadUserInRefusesLinksToSecrets(t *testing.T) {
	home, _, key := world(t)
	dir := filepath.Join(home, ".config", "ama", "prompts")
	must(t, os.MkdirAll(dir, 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "own.md"), []byte("own"), 0o600))
	must(t, os.WriteFile(filepath.Join(home, ".config", "ama", "auth.json"), []byte(secret), 0o600))
	must(t, os.WriteFile(filepath.Join(home, "dotfiles.md"), []byte("dot"), 0o600))
	must(t, os.Symlink(key, filepath.Join(dir, "key.md")))
	must(t, os.Symlink(filepath.Join(home, ".config", "ama", "auth.json"), filepath.Join(dir, "auth.md")))
	must(t, os.Symlink(filepath.Join(home, "dotfiles.md"), filepath.Join(dir, "dot.md")))
	for name, want := range map[string]string{"own.md": "own", "dot.md": "dot"} {
		if b, err := ReadUserIn(dir, filepath.Join(dir, name), 1<<20); err != nil || string(b) != want {
			t.Errorf("ReadUserIn(%s) = %q, %v", name, b, err)
		}
	}
	for _, name := range []string{"key.md", "auth.md"} {
		if b, err := ReadUserIn(dir, filepath.Join(dir, name), 1<<20); !errors.Is(err, ErrSecret) || strings.Contains(string(b), secret) {
			t.Errorf("ReadUserIn(%s) = %q, %v", name, b, err)
		}
	}
}

// Another local user made ama's directory in a shared place first
// ($TMPDIR/ama-outputs): ama-rpc puts nothing there (that user could read,
// replace or remove it). Its own and root's directories are used.
func TestForeignDirectoryRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a directory of another user needs root")
	}
	shared := t.TempDir()
	foreign := filepath.Join(shared, "ama-outputs")
	if err := os.Mkdir(foreign, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(foreign, 65534, 65534); err != nil {
		t.Skipf("chown: %v", err)
	}
	if err := WriteAtomic(foreign, "report.md", []byte("task report")); !errors.Is(err, ErrNotOwned) {
		t.Errorf("WriteAtomic: %v, want ErrNotOwned", err)
	}
	if err := WriteAtomicIn(shared, "ama-outputs/report.md", []byte("task report")); !errors.Is(err, ErrNotOwned) {
		t.Errorf("WriteAtomicIn: %v, want ErrNotOwned", err)
	}
	if f, _, err := CreateTemp(foreign, "job-*.log"); !errors.Is(err, ErrNotOwned) {
		if f != nil {
			f.Close()
		}
		t.Errorf("CreateTemp: %v, want ErrNotOwned", err)
	}
	if f, err := OpenAppend(filepath.Join(foreign, "decisions.jsonl")); !errors.Is(err, ErrNotOwned) {
		if f != nil {
			f.Close()
		}
		t.Errorf("OpenAppend: %v, want ErrNotOwned", err)
	}
	if ents, _ := os.ReadDir(foreign); len(ents) != 0 {
		t.Errorf("files left in the other user's directory: %v", ents)
	}
	// Everyday: the user's own directory, and root's shared one (the
	// parent here, as /tmp).
	if err := WriteAtomic(filepath.Join(shared, "mine"), "report.md", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomicIn(shared, "top.md", []byte("ok")); err != nil {
		t.Fatal(err)
	}
}

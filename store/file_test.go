package store_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

func TestCreateAppendReopen(t *testing.T) {
	root := t.TempDir()
	dir := store.SessionDir(filepath.Join(root, "sessions"), "/work/proj")
	created := mustTime("2026-10-02T05:23:11.123Z")
	path := filepath.Join(dir, store.FileName(created, "sess-1"))
	h := testHeader("sess-1")

	buffered := chain(2)
	f, err := store.Create(path, h, buffered)
	if err != nil {
		t.Fatal(err)
	}
	lock := readBytes(t, path+".lock")
	if string(lock) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock content %q, want our pid", lock)
	}
	more := []*store.Entry{
		withIDs(store.MessageEntry(&llm.AssistantMessage{
			Role: llm.RoleAssistant, Content: []llm.Content{llm.Text("<b>&amp;</b> \u2028 é")},
			API: "fake", Provider: "fake", Model: "echo", StopReason: llm.StopStop, Timestamp: 3,
		}), "e3", ptr("e2")),
		withIDs(store.ModelChangeEntry("fake", "echo", ""), "e4", ptr("e3")),
		withIDs(store.ThinkingLevelEntry("high"), "e5", ptr("e4")),
	}
	if err := f.Append(more[0], more[1]); err != nil {
		t.Fatal(err)
	}
	if err := f.Append(more[2]); err != nil {
		t.Fatal(err)
	}
	if err := f.AppendLeaf(ptr("e3"), testTime); err != nil {
		t.Fatal(err)
	}
	named := withIDs(store.SessionInfoEntry("my session"), "e6", ptr("e3"))
	if err := f.Append(named); err != nil {
		t.Fatal(err)
	}
	if err := f.AppendLeaf(ptr("e2"), testTime); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
		t.Fatalf("lock not released: %v", err)
	}
	if err := f.Append(named); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("append after close = %v", err)
	}

	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700, filepath.Dir(dir): 0o700} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", p, st.Mode().Perm(), want)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(matches) != 0 {
		t.Errorf("temp files left: %v", matches)
	}

	f2, snap, err := store.Open(path, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	all := append(append(append([]*store.Entry{}, buffered...), more...), named)
	if diff := cmp.Diff(lines(t, all), lines(t, snap.Entries)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if snap.Header != h || *snap.LeafID != "e2" || snap.Name != "my session" || snap.RepairedTail || snap.MissingNewline {
		t.Errorf("snapshot header %+v leaf %v name %q", snap.Header, *snap.LeafID, snap.Name)
	}
	// No HTML escaping (JSON.stringify does none). encoding/json, which
	// builds the message bodies, still writes U+2028 as \u2028.
	data := readBytes(t, path)
	if !bytes.Contains(data, []byte(`"<b>&amp;</b> \u2028 é"`)) {
		t.Errorf("text was escaped:\n%s", data)
	}
	firstLine, _, _ := bytes.Cut(data, []byte("\n"))
	wantHeader := `{"type":"session","version":1,"id":"sess-1","timestamp":"2026-10-02T05:23:11.123Z","cwd":"/work/proj","agent":{"name":"ama","version":"0.0.0-test"}}`
	if string(firstLine) != wantHeader {
		t.Errorf("header line\n%s\nwant\n%s", firstLine, wantHeader)
	}
	if id, ok := store.IDFromFileName(path); !ok || id != "sess-1" {
		t.Errorf("IDFromFileName = %q, %v", id, ok)
	}
	// A new entry after the leaf line branches from the leaf, and the leaf
	// line no longer counts.
	if err := f2.Append(msgEntry("e7", snap.LeafID, "branch")); err != nil {
		t.Fatal(err)
	}
	again, err := store.ReadSnapshot(path)
	if err != nil || *again.LeafID != "e7" {
		t.Fatalf("after append: %v leaf %v", err, again.LeafID)
	}
	if diff := cmp.Diff([]string{"e1", "e2", "e7"}, ids(again.Tree().Branch())); diff != "" {
		t.Error(diff)
	}
}

func TestCreateErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("existing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(path, testHeader("s"), nil); !errors.Is(err, store.ErrExists) {
		t.Fatalf("Create over a file = %v, want ErrExists", err)
	}
	if got := string(readBytes(t, path)); got != "existing\n" {
		t.Fatalf("existing file changed: %q", got)
	}
	if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
		t.Fatal("lock left behind")
	}
	bad := testHeader("")
	if _, err := store.Create(filepath.Join(dir, "b.jsonl"), bad, nil); err == nil {
		t.Fatal("header without id accepted")
	}
	for name, e := range map[string]*store.Entry{
		"no id":        store.SessionInfoEntry("x"),
		"leaf type":    withIDs(store.RawEntry("leaf", nil), "x", nil),
		"session type": withIDs(store.RawEntry("session", nil), "x", nil),
		"array body":   withIDs(store.RawEntry("custom", json.RawMessage(`[1]`)), "x", nil),
		"reserved key": withIDs(store.RawEntry("custom", json.RawMessage(`{"id":"y"}`)), "x", nil),
		"broken body":  withIDs(store.RawEntry("custom", json.RawMessage(`{"a":`)), "x", nil),
	} {
		if _, err := store.Create(filepath.Join(dir, "c.jsonl"), testHeader("c"), []*store.Entry{e}); !errors.Is(err, store.ErrMalformedEntry) {
			t.Errorf("%s: Create = %v, want ErrMalformedEntry", name, err)
		}
	}
	if _, _, err := store.Open(filepath.Join(dir, "missing.jsonl"), store.OpenOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Open missing = %v, want ErrNotFound", err)
	}
	if _, err := store.ReadSnapshot(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReadSnapshot missing = %v, want ErrNotFound", err)
	}
}

func newSession(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, err := store.Create(path, testHeader("s"), chain(3))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// deadPid returns the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestLock(t *testing.T) {
	t.Run("same process", func(t *testing.T) {
		path := newSession(t)
		f, _, err := store.Open(path, store.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := store.Open(path, store.OpenOptions{}); !errors.Is(err, store.ErrLocked) {
			t.Fatalf("second Open = %v, want ErrLocked", err)
		}
		f.Close()
		f, _, err = store.Open(path, store.OpenOptions{})
		if err != nil {
			t.Fatalf("Open after Close: %v", err)
		}
		f.Close()
	})
	t.Run("live owner", func(t *testing.T) {
		path := newSession(t)
		owner := strconv.Itoa(os.Getppid()) // alive: the go command or shell that runs us
		os.WriteFile(path+".lock", []byte(owner), 0o600)
		before := readBytes(t, path)
		if _, _, err := store.Open(path, store.OpenOptions{}); !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), owner) {
			t.Fatalf("Open = %v, want ErrLocked naming pid %s", err, owner)
		}
		if got := string(readBytes(t, path+".lock")); got != owner {
			t.Fatalf("foreign lock changed to %q", got)
		}
		if !bytes.Equal(before, readBytes(t, path)) {
			t.Fatal("locked file modified")
		}
	})
	for name, content := range map[string]func(t *testing.T) string{
		"dead owner":         func(t *testing.T) string { return strconv.Itoa(deadPid(t)) },
		"garbage":            func(*testing.T) string { return "not a pid" },
		"empty":              func(*testing.T) string { return "" },
		"own pid, not held":  func(*testing.T) string { return strconv.Itoa(os.Getpid()) },
		"whitespace and pid": func(t *testing.T) string { return " " + strconv.Itoa(deadPid(t)) + "\n" },
	} {
		t.Run("stale "+name, func(t *testing.T) {
			path := newSession(t)
			os.WriteFile(path+".lock", []byte(content(t)), 0o600)
			f, snap, err := store.Open(path, store.OpenOptions{})
			if err != nil {
				t.Fatalf("stale lock not taken over: %v", err)
			}
			if got := string(readBytes(t, path+".lock")); got != strconv.Itoa(os.Getpid()) {
				t.Errorf("lock content %q after takeover", got)
			}
			if len(snap.Entries) != 3 {
				t.Errorf("%d entries", len(snap.Entries))
			}
			f.Close()
			if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
				t.Error("lock not removed by Close")
			}
			if m, _ := filepath.Glob(path + ".lock.*"); len(m) != 0 {
				t.Errorf("takeover left files: %v", m)
			}
		})
	}
	// Close removes the lock only while it holds this process's pid, and
	// exactly that: a lock another process took over meanwhile (its pid,
	// or one that merely starts with ours) stays.
	t.Run("release keeps a lock not ours", func(t *testing.T) {
		own := strconv.Itoa(os.Getpid())
		for _, foreign := range []string{strconv.Itoa(os.Getppid()), own + "0", own[:len(own)-1]} {
			path := newSession(t)
			f, _, err := store.Open(path, store.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(path + ".lock"); err != nil || fi.Mode().Perm() != 0o600 || string(readBytes(t, path+".lock")) != own {
				t.Fatalf("lock %v %v %q, want mode 0600 holding %s", fi, err, readBytes(t, path+".lock"), own)
			}
			os.WriteFile(path+".lock", []byte(foreign), 0o600)
			f.Close()
			if got, err := os.ReadFile(path + ".lock"); err != nil || string(got) != foreign {
				t.Errorf("lock %q after Close: %q, %v; want it left", foreign, got, err)
			}
		}
	})
	// While this process holds a lock, the next is one more name of the
	// same file (Linux): the same pid, and the same rules for a taken
	// name; each name goes with its own lock.
	t.Run("next lock links a held one", func(t *testing.T) {
		dir := t.TempDir()
		a, err := store.Create(filepath.Join(dir, "a.jsonl"), testHeader("a"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		bPath := filepath.Join(dir, "b.jsonl")
		b, err := store.Create(bPath, testHeader("b"), chain(3))
		if err != nil {
			t.Fatal(err)
		}
		fa, errA := os.Stat(filepath.Join(dir, "a.jsonl.lock"))
		fb, errB := os.Stat(bPath + ".lock")
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		// (Another test's lock may be the one linked: the set of held
		// locks is the process's.)
		if runtime.GOOS == "linux" && nlink(fb) < 2 {
			t.Errorf("the second lock is a new file (%d name), not a link of a held one", nlink(fb))
		}
		_ = fa
		own := strconv.Itoa(os.Getpid())
		if got := string(readBytes(t, bPath+".lock")); got != own || fb.Mode().Perm() != 0o600 {
			t.Errorf("linked lock %q %v, want %s 0600", got, fb.Mode(), own)
		}
		// A taken name: a live foreign lock stays, as with O_EXCL.
		cPath := filepath.Join(dir, "c.jsonl")
		foreign := strconv.Itoa(os.Getppid())
		os.WriteFile(cPath+".lock", []byte(foreign), 0o600)
		if _, err := store.Create(cPath, testHeader("c"), nil); !errors.Is(err, store.ErrLocked) {
			t.Fatalf("Create over a live lock = %v, want ErrLocked", err)
		}
		if got := string(readBytes(t, cPath+".lock")); got != foreign {
			t.Fatalf("foreign lock changed to %q", got)
		}
		// A stale one is taken over by a link too.
		os.WriteFile(cPath+".lock", []byte(strconv.Itoa(deadPid(t))), 0o600)
		c, err := store.Create(cPath, testHeader("c"), nil)
		if err != nil {
			t.Fatalf("stale lock not taken over: %v", err)
		}
		if got := string(readBytes(t, cPath+".lock")); got != own {
			t.Errorf("lock %q after takeover, want %s", got, own)
		}
		c.Close()
		// Each name is released with its own lock.
		a.Close()
		if got := string(readBytes(t, bPath+".lock")); got != own {
			t.Fatalf("b's lock %q after a's Close", got)
		}
		if _, _, err := store.Open(bPath, store.OpenOptions{}); !errors.Is(err, store.ErrLocked) {
			t.Fatalf("Open of b = %v, want ErrLocked (still held)", err)
		}
		// The next lock links b's file, the one still held.
		dPath := filepath.Join(dir, "d.jsonl")
		d, err := store.Create(dPath, testHeader("d"), nil)
		if err != nil {
			t.Fatal(err)
		}
		fd, err := os.Stat(dPath + ".lock")
		if err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS == "linux" && nlink(fd) < 2 {
			t.Error("with the first lock released, the next is a new file, not a link of one still held")
		}
		d.Close()
		// b's lock removed under it: Rewrite puts it back.
		os.Remove(bPath + ".lock")
		os.Remove(bPath)
		if err := b.Rewrite(testHeader("b"), chain(3), nil); err != nil {
			t.Fatal(err)
		}
		if got := string(readBytes(t, bPath+".lock")); got != own {
			t.Fatalf("restored lock %q", got)
		}
		b.Close()
		for _, p := range []string{"a", "b", "c", "d"} {
			if _, err := os.Stat(filepath.Join(dir, p+".jsonl.lock")); !os.IsNotExist(err) {
				t.Errorf("%s's lock left after Close: %v", p, err)
			}
		}
	})
	// A held lock whose directory was removed has no name to link from:
	// the next lock is a new file, and the one after links that one.
	t.Run("next lock after the held one's directory went", func(t *testing.T) {
		gone := filepath.Join(t.TempDir(), "gone")
		a, err := store.Create(filepath.Join(gone, "a.jsonl"), testHeader("a"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		os.RemoveAll(gone)
		dir := t.TempDir()
		for _, name := range []string{"b", "c"} {
			f, err := store.Create(filepath.Join(dir, name+".jsonl"), testHeader(name), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := string(readBytes(t, filepath.Join(dir, name+".jsonl.lock"))); got != strconv.Itoa(os.Getpid()) {
				t.Fatalf("%s's lock holds %q", name, got)
			}
		}
		fi, err := os.Stat(filepath.Join(dir, "c.jsonl.lock"))
		if err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS == "linux" && nlink(fi) < 2 {
			t.Error("c's lock is a new file: the lock without a name stayed the one to link from")
		}
	})
	// A session in a directory not made yet: Create makes it (it no
	// longer stats the directory first) once the lock found it missing,
	// and that miss is not taken for the held lock's name gone: the new
	// lock and the next one still link the held one.
	t.Run("next lock in a new directory", func(t *testing.T) {
		dir := t.TempDir()
		aPath := filepath.Join(dir, "a.jsonl")
		a, err := store.Create(aPath, testHeader("a"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		for i, sub := range []string{"new/sub", "."} {
			p := filepath.Join(dir, sub, fmt.Sprintf("b%d.jsonl", i))
			f, err := store.Create(p, testHeader("b"), chain(3))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fa, errA := os.Stat(aPath + ".lock")
			fb, errB := os.Stat(p + ".lock")
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if runtime.GOOS == "linux" && !os.SameFile(fa, fb) {
				t.Errorf("%s's lock is not a link of the held one", p)
			}
		}
		if fi, err := os.Stat(filepath.Join(dir, "new")); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("new directory: %v %v", fi, err)
		}
	})
	t.Run("create while locked", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "new.jsonl")
		os.WriteFile(path+".lock", []byte(strconv.Itoa(os.Getppid())), 0o600)
		if _, err := store.Create(path, testHeader("n"), nil); !errors.Is(err, store.ErrLocked) {
			t.Fatalf("Create = %v, want ErrLocked", err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatal("file created despite the lock")
		}
	})
}

// TestCrashKeepsAppends: a child process appends entries and is SIGKILLed;
// every append that returned is in the file, which opens cleanly (the
// child's lock is stale and taken over).
func TestCrashKeepsAppends(t *testing.T) {
	for _, n := range []int{50, 0} {
		name := map[bool]string{true: "kill after N appends", false: "kill mid-stream"}[n > 0]
		t.Run(name, func(t *testing.T) {
			path := newSession(t)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envCrashFile+"="+path, envCrashN+"="+strconv.Itoa(n))
			cmd.Stderr = os.Stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			acked := 0
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "done" || (n == 0 && acked >= 300) {
					break
				}
				acked, _ = strconv.Atoi(sc.Text())
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if n > 0 && acked != n {
				t.Fatalf("child acknowledged %d appends, want %d", acked, n)
			}
			f, snap, err := store.Open(path, store.OpenOptions{})
			if err != nil {
				t.Fatalf("reopen after crash: %v", err)
			}
			defer f.Close()
			got := len(snap.Entries) - 3
			if got < acked || (n > 0 && got != n) {
				t.Fatalf("%d entries survived, %d were acknowledged", got, acked)
			}
			branch := snap.Tree().Branch()
			if len(branch) != len(snap.Entries) {
				t.Fatalf("branch %d of %d entries", len(branch), len(snap.Entries))
			}
			for i, e := range branch[3:] {
				if want := fmt.Sprintf("c%07d", i+1); e.ID != want {
					t.Fatalf("entry %d is %s, want %s", i, e.ID, want)
				}
			}
		})
	}
}

func TestNaming(t *testing.T) {
	for _, c := range []struct{ cwd, want string }{
		{"/work/proj", "work-proj"},
		{"//srv/a:b", "srv-a-b"},
		{`C:\Users\me\x`, "C--Users-me-x"},
		{`\\host\share`, "host-share"},
		{"relative/dir", "relative-dir"},
	} {
		if got := store.EncodeCwd(c.cwd); got != c.want {
			t.Errorf("EncodeCwd(%q) = %q, want %q", c.cwd, got, c.want)
		}
	}
	if got := store.SessionDir("/data/sessions", "/work/proj"); got != "/data/sessions/work-proj" {
		t.Errorf("SessionDir = %q", got)
	}
	name := store.FileName(mustTime("2026-10-02T07:23:11.123+02:00"), "0b7c-uuid")
	if name != "2026-10-02T05-23-11-123Z_0b7c-uuid.jsonl" {
		t.Errorf("FileName = %q", name)
	}
	for in, want := range map[string]string{
		name: "0b7c-uuid", "/a/b/" + name: "0b7c-uuid", "x_y_z.jsonl": "y_z", "nounderscore.jsonl": "", "a_b.json": "",
	} {
		got, ok := store.IDFromFileName(in)
		if got != want || ok != (want != "") {
			t.Errorf("IDFromFileName(%q) = %q, %v", in, got, ok)
		}
	}
}

func TestListAll(t *testing.T) {
	root := t.TempDir()
	mk := func(cwd, id, created string, entries []*store.Entry) string {
		h := store.NewHeader(id, mustTime(created), cwd, "1")
		path := filepath.Join(store.SessionDir(root, cwd), store.FileName(mustTime(created), id))
		f, err := store.Create(path, h, entries)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		return path
	}
	long := strings.Repeat("😀", 150) // 300 UTF-16 units
	first := []*store.Entry{
		withIDs(store.MessageEntry(&llm.SystemMessage{Role: llm.RoleSystem}), "s", nil),
		withIDs(store.MessageEntry(&llm.UserMessage{Role: llm.RoleUser, Content: llm.BlockContent(llm.Text("a "), llm.Image("AAAA", "image/png"), llm.Text(long))}), "u", ptr("s")),
		withIDs(store.SessionInfoEntry("named"), "n", ptr("u")),
		withIDs(store.RawEntry(store.TypeSessionInfo, nil), "n2", ptr("n")),
	}
	p1 := mk("/w/one", "id-1", "2026-10-01T00:00:00Z", first)
	p2 := mk("/w/two", "id-2", "2026-10-03T00:00:00Z", chain(2))
	p3 := mk("/w/one", "id-3", "2026-10-02T00:00:00Z", nil)
	// Noise: a corrupt session, a lock file, a trash dir, a non-session file.
	os.WriteFile(filepath.Join(store.SessionDir(root, "/w/one"), "2026-10-04T00-00-00-000Z_bad.jsonl"), []byte("{\n"+"x\n"), 0o600)
	os.WriteFile(filepath.Join(store.SessionDir(root, "/w/one"), "notes.txt"), []byte("hi"), 0o600)
	os.MkdirAll(filepath.Join(root, ".trash"), 0o700)
	os.WriteFile(filepath.Join(root, ".trash", "1__x__2026-10-05T00-00-00-000Z_t.jsonl"), readBytes(t, p2), 0o600)

	infos, err := store.ListAll(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range infos {
		got = append(got, i.Path)
	}
	if diff := cmp.Diff([]string{p2, p3, p1}, got); diff != "" {
		t.Fatalf("ListAll order (-want +got):\n%s", diff)
	}
	one := infos[2]
	wantPrompt := "a " + strings.Repeat("😀", 99) // 2 + 198 units; the next emoji would split
	if one.Name != "named" || one.MessageCount != 1 || one.FirstPrompt != wantPrompt || one.Cwd != "/w/one" ||
		one.ID != "id-1" || !one.Created.Equal(mustTime("2026-10-01T00:00:00Z")) {
		t.Errorf("info = %+v", one)
	}
	only, err := store.List(store.SessionDir(root, "/w/one"))
	if err != nil || len(only) != 2 {
		t.Fatalf("List one cwd: %d, %v", len(only), err)
	}
	if missing, err := store.List(filepath.Join(root, "nope")); err != nil || len(missing) != 0 {
		t.Fatalf("List missing dir: %v %v", missing, err)
	}
}

func TestEntryJSON(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{
			`{"type":"custom","customType":"x","data":{"a":[1,2]},"id":"e","parentId":"p","timestamp":"t"}`,
			`{"type":"custom","customType":"x","data":{"a":[1,2]},"id":"e","parentId":"p","timestamp":"t"}`,
		},
		{ // reserved keys anywhere, escapes, whitespace
			` { "id" : "e\u0031" , "a" : { "b" : 1 } , "timestamp" : 5 , "type" : "x" , "c" : "\"" } `,
			`{"type":"x","a":{"b":1},"c":"\"","id":"e1","parentId":null,"timestamp":"5"}`,
		},
		{`{"type":"t","id":"e","parentId":7}`, `{"type":"t","id":"e","parentId":null,"timestamp":""}`},
		{`{"type":"t","id":"\u003c\u2028"}`, "{\"type\":\"t\",\"id\":\"<\u2028\",\"parentId\":null,\"timestamp\":\"\"}"},
	} {
		var e store.Entry
		if err := json.Unmarshal([]byte(c.in), &e); err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := string(e.AppendJSON(nil)); got != c.out {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.out)
		}
		// json.Marshal re-escapes <, >, &, U+2028 and U+2029 but is otherwise
		// the same.
		var back store.Entry
		if raw, err := json.Marshal(&e); err != nil || json.Unmarshal(raw, &back) != nil || string(back.AppendJSON(nil)) != c.out {
			t.Errorf("Marshal %s: %s, %v", c.in, raw, err)
		}
	}
	for _, in := range []string{`[]`, `{"type":"x"}`, `{"id":"x"}`, `{"type":1,"id":"x"}`, `{"type":"x","id":null}`, `{`} {
		var e store.Entry
		if err := e.UnmarshalJSON([]byte(in)); !errors.Is(err, store.ErrMalformedEntry) {
			t.Errorf("%s: err = %v, want ErrMalformedEntry", in, err)
		}
	}
	e := store.CustomEntry("ama.task", map[string]string{"html": "<x> & y"})
	if e.CustomType() != "ama.task" || string(e.Field("data")) != `{"html":"<x> & y"}` {
		t.Errorf("custom type %q data %s", e.CustomType(), e.Field("data"))
	}
}

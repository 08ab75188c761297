package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// createEntries returns n custom entries in a chain, about 100 bytes of
// JSON each.
func createEntries(n int) []*Entry {
	out := make([]*Entry, n)
	var parent *string
	for i := range out {
		e := RawEntry(TypeCustom, json.RawMessage(fmt.Sprintf(`{"customType":"x","data":"entry %d of the chain, some text to make it longer"}`, i)))
		e.ID, e.ParentID, e.Timestamp = fmt.Sprintf("%08x", i), parent, "2026-10-01T00:00:00.000Z"
		parent = &e.ID
		out[i] = e
	}
	return out
}

// syncRecord is one fsync made through syncFile.
type syncRecord struct {
	dir       bool // of a directory
	nameThere bool // the session file's name existed at that moment
}

// recordSyncs records the fsyncs of creation while the test runs; path
// is the session file whose name is checked at each.
func recordSyncs(t *testing.T, path string) func() []syncRecord {
	var mu sync.Mutex
	var recs []syncRecord
	old := syncFile
	syncFile = func(f *os.File) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		mu.Lock()
		recs = append(recs, syncRecord{dir: fi.IsDir(), nameThere: exists(path)})
		mu.Unlock()
		return old(f)
	}
	t.Cleanup(func() { syncFile = old })
	return func() []syncRecord {
		mu.Lock()
		defer mu.Unlock()
		return append([]syncRecord(nil), recs...)
	}
}

// TestCreateSyncs: Create returns only once the file's bytes and its name
// are durable, in an order a power loss cannot turn into a part of a
// file that looks whole. A new session's small file is written under its
// name, then it and its directory are fsynced (at once); a large one
// (a fork) is fsynced before it has its name (O_TMPFILE, or a temporary
// file), and after the link once more (its inode's new link count; on
// ext4 this also writes the name), then its directory where the file's
// fsync does not make the name durable.
func TestCreateSyncs(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
	}{{"small", 3}, {"large", 2000}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s", "f.jsonl")
			entries := createEntries(tc.n)
			syncs := recordSyncs(t, path)
			f, err := Create(path, NewHeader("s", mustParse(t, "2026-10-01T00:00:00Z"), "/w", "1"), entries)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			recs := syncs()
			var before, after, dir int
			for _, r := range recs {
				switch {
				case r.dir:
					dir++
					if !r.nameThere {
						t.Errorf("directory fsynced before the file had its name: %+v", recs)
					}
				case r.nameThere:
					after++
				default:
					before++
				}
			}
			anon := tc.n > 3 && anonWorks(filepath.Dir(path))
			switch {
			case tc.n <= 3: // the file under its name, then it and the directory at once
				if before+after != 1 || dir != 1 {
					t.Errorf("fsyncs: %d of the file and %d of the directory, want 1 and 1 (%+v)", before+after, dir, recs)
				}
			case anon:
				wantDir := 1
				if syncsNewName(f.osf) {
					wantDir = 0
				}
				if before != 1 || after != 1 || dir != wantDir {
					t.Errorf("fsyncs of the file before its name %d, after %d, of the directory %d; want 1, 1 and %d (%+v)", before, after, dir, wantDir, recs)
				}
				if len(recs) > 1 && recs[0].nameThere {
					t.Errorf("a large file fsynced first after it had its name (a crash could leave a part of it): %+v", recs)
				}
			default: // writeTemp: fsynced under its temporary name, renamed, the directory
				if before != 1 || after != 0 || dir != 1 {
					t.Errorf("fsyncs of the file before its name %d, after %d, of the directory %d; want 1, 0 and 1 (%+v)", before, after, dir, recs)
				}
			}
			// The File appends to the file at the name (the identity check
			// of an append finds the linked file the one it writes).
			more := createEntries(tc.n + 1)[tc.n]
			more.ParentID = &entries[tc.n-1].ID
			if err := f.Append(more); err != nil {
				t.Fatal(err)
			}
			snap, err := ReadSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Entries) != tc.n+1 {
				t.Fatalf("read %d entries, want %d", len(snap.Entries), tc.n+1)
			}
			if tc.n > 3 && f.size <= directCreateBytes {
				t.Fatalf("the large case is %d bytes, not above directCreateBytes", f.size)
			}
			left, _ := os.ReadDir(filepath.Dir(path))
			for _, e := range left {
				if name := e.Name(); name != "f.jsonl" && name != "f.jsonl.lock" {
					t.Errorf("left behind: %s", name)
				}
			}
		})
	}
}

// anonWorks reports whether dir can hold files without a name (writeAnon,
// not writeTemp).
func anonWorks(dir string) bool {
	fd, err := openAnon(dir)
	if err != nil {
		return false
	}
	fd.Close()
	return true
}

// TestCreateLargeExists: the link of a large file does not replace a
// file that took its name meanwhile (the check before it is not under
// any lock another writer respects).
func TestCreateLargeExists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(path, []byte("other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, _, err := writeAnon(path, func(w io.Writer) (int64, error) {
		n, err := w.Write([]byte("mine\n"))
		return int64(n), err
	})
	if errors.Is(err, errNoAnon) {
		t.Skip("no O_TMPFILE here: large files go through writeTemp, whose rename is checked under the lock")
	}
	if err == nil {
		fd.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("writeAnon over an existing file: %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "other\n" {
		t.Fatalf("existing file now %q", got)
	}
}

const envAnonChild = "AMA_STORE_ANON_CHILD"

// TestHelperAnonChild is the process TestCreateLargeDies kills: it
// writes half of a large file through writeAnon, says so and waits.
func TestHelperAnonChild(t *testing.T) {
	path := os.Getenv(envAnonChild)
	if path == "" {
		return // only as TestCreateLargeDies's child
	}
	_, _, err := writeAnon(path, func(w io.Writer) (int64, error) {
		n, err := w.Write([]byte(strings.Repeat(`{"type":"custom","id":"x"}`+"\n", 10_000)))
		if err == nil {
			fmt.Println("written")
			_, _ = io.Copy(io.Discard, os.Stdin) // until killed
		}
		return int64(n), err
	})
	fmt.Println("child:", err)
	os.Exit(1)
}

// TestCreateLargeDies: a process killed while it writes a large file
// (a fork) leaves nothing in the directory: no part of the file under
// its name, no temporary file (writeTemp left one behind).
func TestCreateLargeDies(t *testing.T) {
	dir := t.TempDir()
	if fd, err := openAnon(dir); err != nil {
		t.Skipf("no O_TMPFILE here (%v): large files go through writeTemp", err)
	} else {
		fd.Close()
	}
	path := filepath.Join(dir, "f.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAnonChild$")
	cmd.Env = append(os.Environ(), envAnonChild+"="+path)
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
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "written\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q", line)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind after the writer died: %s", e.Name())
	}
}

// TestCreateTornSmall: a new session's file is written under its name, so
// a crash during Create (a power loss before its fsync) can leave any
// prefix of it there. Whatever the prefix, readers agree: a torn header
// is "missing session header" (ErrCorrupt, never guessed at), a torn
// last line is dropped by ReadSnapshot and cut off by Open's repair,
// which keeps every whole line.
func TestCreateTornSmall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s", "f.jsonl")
	f, err := Create(path, NewHeader("s", mustParse(t, "2026-10-01T00:00:00Z"), "/w", "1"), createEntries(3))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	headerEnd := strings.IndexByte(string(data), '\n')
	torn := filepath.Join(dir, "torn.jsonl")
	// The cuts: around every line end, and every 11th byte between.
	var cuts []int
	for cut := range data {
		if cut%11 == 0 || data[cut] == '\n' || cut > 0 && data[cut-1] == '\n' || cut+1 < len(data) && data[cut+1] == '\n' {
			cuts = append(cuts, cut)
		}
	}
	for _, cut := range cuts {
		if err := os.WriteFile(torn, data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		// The whole lines before the cut, and a last line cut just
		// before its LF (whole JSON: kept, the LF added by Open).
		whole := strings.Count(string(data[:cut]), "\n")
		if cut < len(data) && data[cut] == '\n' {
			whole++
		}
		snap, err := ReadSnapshot(torn)
		if cut < headerEnd {
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("cut %d in the header: %v, want a corrupt file", cut, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if got := len(snap.Entries); got != whole-1 {
			t.Fatalf("cut %d: %d entries, want %d", cut, got, whole-1)
		}
		of, osnap, err := Open(torn, OpenOptions{})
		if err != nil {
			t.Fatalf("open, cut %d: %v", cut, err)
		}
		of.Close()
		if len(osnap.Entries) != whole-1 {
			t.Fatalf("open, cut %d: %d entries, want %d", cut, len(osnap.Entries), whole-1)
		}
		repaired, _ := os.ReadFile(torn)
		want := data[:strings.LastIndexByte(string(data[:cut+1]), '\n')+1]
		if string(repaired) != string(want) {
			t.Fatalf("open, cut %d: repaired to %q, want %q", cut, repaired, want)
		}
	}
}

// TestCreateKeptBuffer: Create writes its lines through the one kept
// buffer (takeLineBuf), in place and through a file without a name, one
// Create after another and several at once; each file holds its own
// lines, whole, whatever the buffer held before, and the buffer is kept
// for the next.
func TestCreateKeptBuffer(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	sizes := []int{900, 20, 3000, 5, 600, 1} // ~90 KB (a file without a name), 2 KB (in place), 300 KB, ...
	want := func(i int, es []*Entry) []byte {
		h := NewHeader(fmt.Sprintf("kept%d", i), at, "/w", "t")
		b := append(h.appendJSON(nil), '\n')
		for _, e := range es {
			b = append(e.AppendJSON(b), '\n')
		}
		return b
	}
	check := func(i int) {
		es := createEntries(sizes[i%len(sizes)])
		for k, e := range es[:len(es)/2] { // other text than the file before at the same place
			es[k] = RawEntry(TypeCustom, json.RawMessage(fmt.Sprintf(`{"customType":"y","n":%d}`, i*1000+k)))
			es[k].ID, es[k].ParentID, es[k].Timestamp = e.ID, e.ParentID, e.Timestamp
		}
		path := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		f, err := Create(path, NewHeader(fmt.Sprintf("kept%d", i), at, "/w", "t"), es)
		if err != nil {
			t.Error(err)
			return
		}
		f.Close()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			return
		}
		if w := want(i, es); string(got) != string(w) {
			t.Errorf("file %d (%d entries): %d bytes, want %d", i, len(es), len(got), len(w))
		}
	}
	for i := range sizes {
		check(i)
	}
	keptLine.mu.Lock()
	kept := cap(keptLine.buf)
	keptLine.mu.Unlock()
	if kept != keptLineBytes {
		t.Errorf("kept buffer of %d bytes after Create, want %d", kept, keptLineBytes)
	}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() { defer wg.Done(); check(len(sizes) + i) }()
	}
	wg.Wait()
}

// writeSizes records the length of each write.
type writeSizes struct {
	bytes.Buffer
	n []int
}

func (w *writeSizes) Write(p []byte) (int, error) {
	w.n = append(w.n, len(p))
	return w.Buffer.Write(p)
}

// TestWriteLinesAligned: writeLines writes whole chunks of a power of two
// but for its last write, so every write starts at a multiple of the chunk
// (the page cache's folios follow the writes), with the lines whole and in
// order, including a line longer than the buffer.
func TestWriteLinesAligned(t *testing.T) {
	at := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range []int{1, 1000, 5000, 30000} {
		es := createEntries(n)
		if n == 5000 { // a line longer than the kept buffer
			big := RawEntry(TypeCustom, json.RawMessage(`{"customType":"x","data":"`+strings.Repeat("b", 200<<10)+`"}`))
			big.ID, big.ParentID, big.Timestamp = es[10].ID, es[10].ParentID, es[10].Timestamp
			es[10] = big
		}
		h := NewHeader("aligned", at, "/w", "t")
		want := append(h.appendJSON(nil), '\n')
		for _, e := range es {
			want = append(e.AppendJSON(want), '\n')
		}
		var w writeSizes
		got, err := writeLines(&w, h, es, len(want))
		if err != nil || got != int64(len(want)) || !bytes.Equal(w.Bytes(), want) {
			t.Fatalf("%d entries: wrote %d bytes (%v), want %d, same bytes %v", n, got, err, len(want), bytes.Equal(w.Bytes(), want))
		}
		chunk := min(max(len(want)/64, 64<<10), 1<<20)
		chunk = 1 << (bits.Len(uint(chunk)) - 1)
		for i, k := range w.n[:len(w.n)-1] {
			if k%chunk != 0 {
				t.Errorf("%d entries: write %d of %d is %d bytes, not whole chunks of %d", n, i, len(w.n), k, chunk)
			}
		}
	}
}

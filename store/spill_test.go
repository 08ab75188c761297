package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/armadra/ama-rpc/llm"
)

// where says what holds the byte at p: "blob" for a mapping of an
// unlinked blob file, "other" for anything else (the Go heap among it).
func where(t *testing.T, p unsafe.Pointer) string {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps to tell mappings apart: %v", err)
	}
	defer f.Close()
	addr := uint64(uintptr(p))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		a, _ := strconv.ParseUint(lo, 16, 64)
		b, _ := strconv.ParseUint(hi, 16, 64)
		if addr < a || addr >= b {
			continue
		}
		if len(fields) >= 6 && strings.Contains(fields[5], "ama-blob") && strings.HasSuffix(sc.Text(), "(deleted)") {
			return "blob"
		}
		return "other"
	}
	return "other"
}

func bodyAt(e *Entry) unsafe.Pointer { return unsafe.Pointer(e.body.Load()) }

// bigStrings returns the big strings of e's message (llm.MoveStrings
// visits them; a refused move changes nothing).
func bigStrings(t *testing.T, e *Entry) []string {
	t.Helper()
	m, _, err := e.contextMessage()
	if err != nil || m == nil {
		t.Fatalf("message: %v", err)
	}
	var out []string
	llm.MoveStrings(m, func(s string) (string, bool) {
		out = append(out, s)
		return "", false
	})
	if len(out) == 0 {
		t.Fatalf("no big string in %T", m)
	}
	return out
}

func newTestFile(t *testing.T) (*File, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	f, err := Create(path, NewHeader("s1", time.Unix(0, 0), dir, "test"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, path
}

var ts = "2026-12-01T00:00:00.000Z"

// A huge entry leaves the heap once written: its body and the big text of
// its message are mappings of the unlinked blob file, byte for byte what
// they were; an announcement's snapshot keeps the heap copy; the file and
// a reopened session read the same.
func TestSpillMovesHugeEntries(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tells mappings apart through /proc/self/maps")
	}
	plain := strings.Repeat("a", 3<<19)
	escaped := strings.Repeat("line \"one\"\n", 120<<10)
	image := strings.Repeat("iVBORw0K", 160<<10) // 1.25 MiB of base64
	cases := []struct {
		name string
		make func() *Entry
		text bool // the entry has a big message text
	}{
		{"user text needing no escapes", func() *Entry {
			return MessageEntry(&llm.UserMessage{Role: "user", Content: llm.StringContent(plain), Timestamp: 1})
		}, true},
		{"user text with escapes", func() *Entry {
			return MessageEntry(&llm.UserMessage{Role: "user", Content: llm.StringContent(escaped), Timestamp: 1})
		}, true},
		{"custom message", func() *Entry {
			return CustomMessageEntry(&llm.CustomMessage{Role: "custom", CustomType: "paste", Content: llm.StringContent(escaped), Display: true})
		}, true},
		{"custom entry", func() *Entry { return CustomEntry("blob", map[string]string{"data": plain}) }, false},
		{"prompt with images", func() *Entry {
			return MessageEntry(&llm.UserMessage{Role: "user", Content: llm.BlockContent(llm.Text(escaped), llm.Image(image, "image/png"), llm.Image(image[:1<<17], "image/png")), Timestamp: 1})
		}, true},
		{"tool result with an image", func() *Entry {
			return MessageEntry(&llm.ToolResultMessage{Role: "toolResult", ToolCallID: "c", ToolName: "read", Content: []llm.Content{llm.Image(image, "image/png")}, Timestamp: 1})
		}, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, path := newTestFile(t)
			e := tc.make()
			e.ID, e.Timestamp = fmt.Sprintf("e%d", i), ts
			wantBody := bytes.Clone(e.Body())
			wantLine := bytes.Clone(e.AppendJSON(nil))
			var wantTexts []string
			var wantLen int
			if tc.text {
				m, _, _ := e.contextMessage()
				for _, s := range bigStrings(t, e) {
					wantTexts = append(wantTexts, strings.Clone(s))
				}
				wantLen = llm.EncodedLen(m)
			}
			view := e.Snapshot()
			if view == e {
				t.Fatal("Snapshot of a huge entry returned the entry")
			}
			if err := f.Append(e); err != nil {
				t.Fatal(err)
			}
			if got := where(t, bodyAt(e)); got != "blob" {
				t.Fatalf("body is in %s memory after the append, want the blob file", got)
			}
			if !bytes.Equal(e.Body(), wantBody) || !bytes.Equal(e.AppendJSON(nil), wantLine) {
				t.Fatal("the moved body differs")
			}
			if where(t, bodyAt(view)) != "other" || !bytes.Equal(view.Body(), wantBody) {
				t.Fatal("the snapshot does not keep the heap copy")
			}
			if tc.text {
				moved := bigStrings(t, e)
				for i, s := range moved {
					if where(t, unsafe.Pointer(unsafe.StringData(s))) != "blob" {
						t.Fatalf("big string %d of the message stayed in the heap", i)
					}
				}
				m, _, _ := e.contextMessage()
				if !slices.Equal(moved, wantTexts) || llm.EncodedLen(m) != wantLen {
					t.Fatalf("moved strings differ, or their size %d, want %d", llm.EncodedLen(m), wantLen)
				}
			}
			// Nothing but the session file and its lock is left.
			names, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
			hidden, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"))
			if len(names) != 2 || len(hidden) != 0 {
				t.Fatalf("files next to the session: %v %v", names, hidden)
			}
			snap, err := ReadSnapshot(path)
			if err != nil || len(snap.Entries) != 1 || !bytes.Equal(snap.Entries[0].Body(), wantBody) {
				t.Fatalf("read back: %v", err)
			}
			// Reopening (resume) moves the huge entry out of the heap too.
			f.Close()
			g, snap, err := Open(path, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			r := snap.Entries[0]
			if where(t, bodyAt(r)) != "blob" || !bytes.Equal(r.Body(), wantBody) {
				t.Fatal("a reopened huge entry stayed in the heap")
			}
			if tc.text {
				got := bigStrings(t, r)
				for _, s := range got {
					if where(t, unsafe.Pointer(unsafe.StringData(s))) != "blob" {
						t.Fatal("a reopened big string stayed in the heap")
					}
				}
				if !slices.Equal(got, wantTexts) {
					t.Fatal("a reopened big string differs")
				}
			}
		})
	}
}

// Small entries stay where they are, and so does a huge one when the
// blob file cannot be made.
func TestSpillKeepsEntriesItCannotMove(t *testing.T) {
	if !canMap {
		t.Skip("no file mappings on this platform: entries never move")
	}
	f, _ := newTestFile(t)
	small := MessageEntry(&llm.UserMessage{Role: "user", Content: llm.StringContent("hi")})
	small.ID, small.Timestamp = "s", ts
	if small.Snapshot() != small {
		t.Fatal("Snapshot copied a small entry")
	}
	before := bodyAt(small)
	if err := f.Append(small); err != nil || bodyAt(small) != before {
		t.Fatalf("small entry moved (%v)", err)
	}

	big := MessageEntry(&llm.UserMessage{Role: "user", Content: llm.StringContent(strings.Repeat("x", 2<<20))})
	big.ID, big.Timestamp = "b", ts
	want := bytes.Clone(big.Body())
	before = bodyAt(big)
	big.spill(&blobFile{dir: t.TempDir(), failed: errors.New("no blobs here")})
	if bodyAt(big) != before || !bytes.Equal(big.Body(), want) || big.spilled.Load() {
		t.Fatal("a failed spill changed the entry")
	}
	big.spill(&f.blobs) // a later try still works
	if !big.spilled.Load() || !bytes.Equal(big.Body(), want) {
		t.Fatal("the second try did not move the entry")
	}
}

// Readers on other goroutines see the same bytes while an entry moves
// (run with -race: the body and message are swapped atomically).
func TestSpillWhileRead(t *testing.T) {
	if !canMap {
		t.Skip("no file mappings on this platform: entries never move")
	}
	f, _ := newTestFile(t)
	text := strings.Repeat("ab\n", 400<<10)
	e := MessageEntry(&llm.UserMessage{Role: "user", Content: llm.StringContent(text)})
	e.ID, e.Timestamp = "r", ts
	want := bytes.Clone(e.Body())
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan string, 4)
	var appended atomic.Bool
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Reads until the append (which moves the entry) returned,
			// then one more of the moved entry.
			for last := false; !last; {
				last = appended.Load()
				if !bytes.Equal(e.Body(), want) {
					errs <- "body differs"
					return
				}
				m, err := e.Message()
				if err != nil || m.(*llm.UserMessage).Content.Text != text {
					errs <- "text differs"
					return
				}
				var v struct{ Message json.RawMessage }
				if json.Unmarshal(e.Body(), &v) != nil {
					errs <- "body is not JSON"
					return
				}
			}
		}()
	}
	close(start)
	err := f.Append(e)
	appended.Store(true)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if !e.spilled.Load() {
		t.Error("the entry did not move")
	}
}

// mappingOf returns the /proc/self/map_files name of the mapping holding p.
func mappingOf(t *testing.T, p unsafe.Pointer) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	addr := uint64(uintptr(p))
	for _, l := range strings.Split(string(data), "\n") {
		fields := strings.Fields(l)
		if len(fields) == 0 {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		a, _ := strconv.ParseUint(lo, 16, 64)
		b, _ := strconv.ParseUint(hi, 16, 64)
		if addr >= a && addr < b {
			return "/proc/self/map_files/" + fields[0]
		}
	}
	t.Fatal("no mapping holds the body")
	return ""
}

// Issue 36: another process that reaches a spilled blob (through
// /proc/<pid>/fd/N it could, when it was an unlinked file) truncated it,
// and the next read of the mapping killed the server with SIGBUS. The
// blob is a sealed memfd now: it cannot be truncated, grown or written,
// by root either (this test opens it through /proc/self/map_files, which
// takes the privilege; without it nobody can open the blob at all, and
// the check is skipped), and the entry reads back whole.
func TestSpilledBlobCannotBeTruncated(t *testing.T) {
	if !canMap {
		t.Skip("no mappings on this platform: entries never move")
	}
	f, _ := newTestFile(t)
	text := strings.Repeat("z", 3<<20)
	e := MessageEntry(&llm.UserMessage{Role: "user", Content: llm.StringContent(text), Timestamp: 1})
	e.ID, e.Timestamp = "big", ts
	want := bytes.Clone(e.Body())
	if err := f.Append(e); err != nil {
		t.Fatal(err)
	}
	if !e.spilled.Load() || where(t, bodyAt(e)) != "blob" {
		t.Fatal("the entry did not move to a blob")
	}
	name := mappingOf(t, bodyAt(e))
	if err := os.Truncate(name, 0); err == nil {
		t.Fatal("a spilled blob was truncated")
	} else if errors.Is(err, os.ErrPermission) && !strings.Contains(err.Error(), "operation not permitted") {
		t.Logf("truncate refused before the seal: %v", err)
	}
	if w, err := os.OpenFile(name, os.O_WRONLY, 0); err == nil {
		_, werr := w.WriteAt([]byte("X"), 0)
		w.Close()
		if werr == nil {
			t.Fatal("a spilled blob was written")
		}
	}
	if !bytes.Equal(e.Body(), want) {
		t.Fatal("the body changed")
	}
	m, err := e.Message()
	if err != nil || m.(*llm.UserMessage).Content.Text != text {
		t.Fatalf("the message does not read back: %v", err)
	}
}

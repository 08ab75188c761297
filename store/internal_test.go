package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// refLines is the obvious line splitter the streaming reader must agree
// with: split at '\n', drop one '\r', no empty final line after a final LF.
func refLines(data []byte) (out []string, lastUnterminated bool) {
	parts := strings.Split(string(data), "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	} else {
		lastUnterminated = true
	}
	for _, p := range parts {
		out = append(out, strings.TrimSuffix(p, "\r"))
	}
	return out, lastUnterminated
}

func readAllLines(r io.Reader, size int) (out []string, offsets []int64, lastUnterminated bool) {
	lr := newLineReader(r, size)
	for {
		l, ok := lr.next()
		if !ok {
			return out, offsets, lastUnterminated
		}
		out = append(out, string(l.text))
		offsets = append(offsets, l.offset)
		lastUnterminated = l.last
		if l.num != len(out) {
			panic("line numbers out of step")
		}
	}
}

func TestLineReader(t *testing.T) {
	inputs := map[string]string{
		"empty":          "",
		"one":            "a",
		"one-lf":         "a\n",
		"crlf":           "a\r\nb\r\n",
		"cr-only-once":   "a\r\r\nb",
		"blank-lines":    "\n\n  \n",
		"u2028":          "a\u2028b\nc\u2029d",
		"long":           strings.Repeat("x", 1000) + "\n" + strings.Repeat("y", 3000),
		"lone-cr-middle": "a\rb\n",
		"trailing-cr":    "a\r",
	}
	if names, _ := filepath.Glob("../../shared/reference/ama-goldens/sessions/*.jsonl"); len(names) > 0 {
		for _, n := range names {
			b, _ := os.ReadFile(n)
			inputs[filepath.Base(n)] = string(b)
		}
	}
	for name, in := range inputs {
		want, wantLast := refLines([]byte(in))
		for _, size := range []int{1, 3, 7, 64, readChunk} {
			for _, oneByte := range []bool{false, true} {
				var r io.Reader = strings.NewReader(in)
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				got, offsets, gotLast := readAllLines(r, size)
				if diff := cmp.Diff(want, got); diff != "" || gotLast != wantLast {
					t.Errorf("%s size %d oneByte %v: last %v want %v; lines (-want +got):\n%s", name, size, oneByte, gotLast, wantLast, diff)
				}
				// Offsets point at the start of each line.
				var off int64
				for i, o := range offsets {
					if o != off {
						t.Errorf("%s: line %d offset %d, want %d", name, i+1, o, off)
						break
					}
					off += int64(strings.IndexByte(in[off:]+"\n", '\n') + 1)
				}
			}
		}
	}
}

func TestIsBlank(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"", true}, {" \t\v\f\r", true}, {"\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff", true},
		{"\u0085", false}, {"\u180e", false}, {"\u200b", false}, {"x", false}, {" \xff ", false}, {"\u3000{", false},
	} {
		if got := isBlank([]byte(c.in)); got != c.want {
			t.Errorf("isBlank(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

const fuzzHeader = `{"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/w","agent":{"name":"ama","version":"1"}}`

// FuzzParse feeds arbitrary files to the parser (it must never panic, and
// whatever it accepts must re-encode to the same entries) and checks that
// an arbitrary line placed in the middle of a valid file is reported as
// "invalid JSON line" exactly when JSON.parse would reject it.
func FuzzParse(f *testing.F) {
	if names, _ := filepath.Glob("../../shared/reference/ama-goldens/sessions/*.jsonl"); len(names) > 0 {
		for _, n := range names {
			b, _ := os.ReadFile(n)
			f.Add(b)
		}
	}
	for _, seed := range []string{
		fuzzHeader + "\n" + `{"type":"message","message":{"role":"user","content":"x"},"id":"a","parentId":null,"timestamp":"t"}` + "\n",
		fuzzHeader + "\n" + `{"type":"leaf","id":null}`,
		"not json", "\u3000\n", `{"type":"x"`, "{\"type\":\"custom\",\"id\":\"\xff\"}\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, tl, err := readSnapshot(bytes.NewReader(data), "fuzz")
		if err == nil {
			if tl.repaired && tl.truncateAt > int64(len(data)) {
				t.Fatalf("truncate offset %d beyond %d", tl.truncateAt, len(data))
			}
			if snap.LeafID != nil && !slicesContainsID(snap.Entries, *snap.LeafID) {
				t.Fatalf("leaf %q is not an entry", *snap.LeafID)
			}
			for _, e := range snap.Entries {
				line := e.AppendJSON(nil)
				var back Entry
				if err := back.UnmarshalJSON(line); err != nil {
					t.Fatalf("re-read %s: %v", line, err)
				}
				if back.Type != e.Type || back.ID != e.ID || !bytes.Equal(back.Body(), e.Body()) ||
					back.Timestamp != e.Timestamp || (back.ParentID == nil) != (e.ParentID == nil) ||
					(back.ParentID != nil && *back.ParentID != *e.ParentID) {
					t.Fatalf("round trip of %q changed it: %q", line, back.AppendJSON(nil))
				}
			}
		} else if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v is not ErrCorrupt", err)
		}

		mid, _, _ := bytes.Cut(data, []byte("\n"))
		doc := fuzzHeader + "\n" + string(mid) + "\n" + `{"type":"custom","id":"z","parentId":null,"timestamp":"t"}` + "\n"
		_, _, err = readSnapshot(strings.NewReader(doc), "fuzz")
		stripped := stripCR(mid)
		var ce *CorruptError
		switch {
		case isBlank(stripped):
			if err != nil {
				t.Fatalf("blank middle line %q: %v", mid, err)
			}
		case !json.Valid(stripped):
			if !errors.As(err, &ce) || ce.Line != 2 || ce.Reason != ReasonInvalidJSON {
				t.Fatalf("middle line %q: got %v, want fuzz:2: invalid JSON line", mid, err)
			}
		default:
			if errors.As(err, &ce) && (ce.Reason == ReasonInvalidJSON || ce.Line != 2) {
				t.Fatalf("valid middle line %q: %v", mid, err)
			}
		}
	})
}

func slicesContainsID(entries []*Entry, id string) bool {
	for _, e := range entries {
		if e.ID == id {
			return true
		}
	}
	return false
}

// failingWriter writes the first half of a buffer and then fails, like a
// disk that fills up mid-write.
type failingWriter struct {
	*os.File
	failTruncate bool
}

var errDiskFull = errors.New("no space left on device (simulated)")

func (w *failingWriter) Write(p []byte) (int, error) {
	n, _ := w.File.Write(p[:len(p)/2])
	return n, errDiskFull
}

func (w *failingWriter) Truncate(size int64) error {
	if w.failTruncate {
		return errors.New("truncate failed (simulated)")
	}
	return w.File.Truncate(size)
}

func TestAppendFailureRollsBack(t *testing.T) {
	for _, failTruncate := range []bool{false, true} {
		t.Run(map[bool]string{false: "rollback", true: "rollback-fails"}[failTruncate], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			h := NewHeader("s", mustParse(t, "2026-10-01T00:00:00Z"), "/w", "1")
			e1 := RawEntry(TypeCustom, json.RawMessage(`{"customType":"x","data":1}`))
			e1.ID, e1.Timestamp = "e1", "t"
			f, err := Create(path, h, []*Entry{e1})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			before, _ := os.ReadFile(path)
			real := f.fd.(*os.File)
			f.fd = &failingWriter{File: real, failTruncate: failTruncate}
			e2 := RawEntry(TypeCustom, json.RawMessage(`{"customType":"x","data":"`+strings.Repeat("y", 500)+`"}`))
			e2.ID, e2.ParentID, e2.Timestamp = "e2", &e1.ID, "t"
			if err := f.Append(e2); !errors.Is(err, errDiskFull) {
				t.Fatalf("Append error = %v, want the write error", err)
			}
			after, _ := os.ReadFile(path)
			if failTruncate {
				// The half line stays, but the File refuses to write after it.
				f.fd = real
				if err := f.Append(e2); !errors.Is(err, ErrClosed) {
					t.Fatalf("append after failed rollback = %v, want ErrClosed", err)
				}
				f.Close()
				_, snap, err := Open(path, OpenOptions{})
				if err != nil {
					t.Fatalf("reopen: %v", err)
				}
				if !snap.RepairedTail || len(snap.Entries) != 1 {
					t.Fatalf("reopen: repaired %v entries %d", snap.RepairedTail, len(snap.Entries))
				}
				return
			}
			if !bytes.Equal(before, after) {
				t.Fatalf("file changed by a failed append:\n%q\n%q", before, after)
			}
			f.fd = real
			if err := f.Append(e2); err != nil {
				t.Fatal(err)
			}
			snap, err := ReadSnapshot(path)
			if err != nil || len(snap.Entries) != 2 {
				t.Fatalf("after retry: %v, %d entries", err, len(snap.Entries))
			}
		})
	}
}

// TestAppendReadOnlyDescriptor: a descriptor that cannot write (here: opened
// read-only) fails without touching the file.
func TestAppendReadOnlyDescriptor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, err := Create(path, NewHeader("s", mustParse(t, "2026-10-01T00:00:00Z"), "/w", "1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, _ := os.ReadFile(path)
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.fd.Close()
	f.fd = ro
	e := RawEntry(TypeCustom, nil)
	e.ID, e.Timestamp = "e1", "t"
	if err := f.Append(e); err == nil {
		t.Fatal("append through a read-only descriptor succeeded")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("file changed")
	}
}

func mustParse(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

package stdio

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// tailStamp writes ,"seq":N before the line's closing brace (rpc's shape).
func tailStamp(dst, line []byte, seq uint64) []byte {
	dst = append(dst, line[:len(line)-2]...)
	dst = append(dst, `,"seq":`...)
	dst = AppendSeq(dst, seq)
	return append(dst, "}\n"...)
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestSeqStampsInWriteOrder(t *testing.T) {
	var out syncBuf
	w := NewWriter(&out, WriterOptions{DeltaLine: func(dst []byte, typ string, idx int, delta []byte, _ any) []byte {
		return fmt.Appendf(dst, `{"d":%q}`+"\n", delta)
	}})
	q := NewSeq(41, SeqOptions{Stamp: tailStamp})
	w.SendLineSeq([]byte(`{"a":1}`+"\n"), q)
	w.SendLine([]byte(`{"response":1}` + "\n")) // not of the stream
	w.SendLineSeq([]byte(`{"a":2}`+"\n"), q)
	w.Close()
	want := `{"a":1,"seq":42}` + "\n" + `{"response":1}` + "\n" + `{"a":2,"seq":43}` + "\n"
	if got := out.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// A delta of another stream (or of none) never merges with a numbered
// one: each line keeps one number.
func TestSeqDeltasMergeOnlyWithinStream(t *testing.T) {
	block := make(chan struct{})
	var out syncBuf
	w := NewWriter(&out, WriterOptions{DeltaLine: func(dst []byte, typ string, idx int, delta []byte, _ any) []byte {
		return fmt.Appendf(dst, `{"d":%q}`+"\n", delta)
	}})
	// Hold the writer on a first line so the deltas queue up.
	w.SendPieces(1, func(emit func([]byte)) { <-block; emit([]byte("{}\n")) })
	q := NewSeq(0, SeqOptions{Stamp: tailStamp})
	w.SendDeltaSeq("t", 0, "a", nil, q)
	w.SendDeltaSeq("t", 0, "b", nil, q)
	w.SendDelta("t", 0, "c", nil)
	w.SendDeltaSeq("t", 0, "d", nil, q)
	close(block)
	w.Close()
	want := "{}\n" + `{"d":"ab","seq":1}` + "\n" + `{"d":"c"}` + "\n" + `{"d":"d","seq":2}` + "\n"
	if got := out.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSeqRingRetention(t *testing.T) {
	tests := []struct {
		name      string
		ring      RingOptions
		lines     []int // sizes of the lines written (before stamping)
		since     uint64
		ok        bool
		wantLines int // lines replayed
	}{
		{"everything kept", RingOptions{MaxLines: 8}, []int{10, 10, 10}, 100, true, 3},
		{"cursor at the end", RingOptions{MaxLines: 8}, []int{10, 10, 10}, 103, true, 0},
		{"cursor past the end", RingOptions{MaxLines: 8}, []int{10, 10, 10}, 104, false, 0},
		{"cursor before the stream", RingOptions{MaxLines: 8}, []int{10}, 99, false, 0},
		{"evicted by count", RingOptions{MaxLines: 2}, []int{10, 10, 10}, 100, false, 0},
		{"oldest kept's predecessor", RingOptions{MaxLines: 2}, []int{10, 10, 10}, 101, true, 2},
		{"evicted by bytes", RingOptions{MaxBytes: 100}, []int{20, 20, 20}, 101, true, 2},
		{"a line over the budget empties the ring", RingOptions{MaxBytes: 60}, []int{10, 100, 10}, 102, true, 1},
		{"…and its predecessor's cursor expires", RingOptions{MaxBytes: 60}, []int{10, 100, 10}, 101, false, 0},
		{"nothing kept: only the last cursor", RingOptions{MaxLines: -1}, []int{10, 10}, 102, true, 0},
		{"nothing kept: older cursors expire", RingOptions{MaxLines: -1}, []int{10, 10}, 101, false, 0},
		{"empty stream", RingOptions{}, nil, 100, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := NewSeq(100, SeqOptions{Stamp: tailStamp, Ring: tc.ring})
			for i, n := range tc.lines {
				q.stamp([]byte(fmt.Sprintf(`{"i":%d,"p":"%s"}`+"\n", i, strings.Repeat("x", n))))
			}
			from, to, ok := q.Range(tc.since)
			if ok != tc.ok {
				t.Fatalf("Range(%d) ok = %v, want %v", tc.since, ok, tc.ok)
			}
			if !ok {
				return
			}
			var got []string
			q.Each(tc.since, func(l []byte) { got = append(got, string(l)) })
			if len(got) != tc.wantLines || int(to-from+1) != tc.wantLines {
				t.Fatalf("replayed %d lines (range %d..%d), want %d", len(got), from, to, tc.wantLines)
			}
			for i, l := range got {
				if want := fmt.Sprintf(`"seq":%d}`, from+uint64(i)); !strings.HasSuffix(strings.TrimSpace(l), want) {
					t.Fatalf("line %d = %s, want suffix %s", i, l, want)
				}
			}
		})
	}
}

// The ring grows and wraps around without losing order.
func TestSeqRingWraps(t *testing.T) {
	q := NewSeq(0, SeqOptions{Stamp: tailStamp, Ring: RingOptions{MaxLines: 37}})
	for i := 0; i < 1000; i++ {
		q.stamp([]byte(fmt.Sprintf(`{"i":%d}`+"\n", i)))
		if _, _, ok := q.Range(uint64(i + 1 - min(i+1, 37))); !ok {
			t.Fatalf("after %d lines the oldest kept cursor expired", i+1)
		}
	}
	var got []string
	q.Each(990, func(l []byte) { got = append(got, string(l)) })
	if len(got) != 10 || got[0] != `{"i":990,"seq":991}`+"\n" || got[9] != `{"i":999,"seq":1000}`+"\n" {
		t.Fatalf("tail = %q", got)
	}
}

// Passing half of the reservation asks for the next one once; Reserve
// answers it.
func TestSeqExtendsItsReservation(t *testing.T) {
	var asked []uint64
	q := NewSeq(10, SeqOptions{Stamp: tailStamp, Reserved: 20, Extend: func(n uint64) { asked = append(asked, n) }})
	for i := 0; i < 8; i++ {
		q.stamp([]byte("{}\n"))
	}
	if len(asked) != 1 || asked[0] != 16 {
		t.Fatalf("Extend calls = %v, want [16]", asked)
	}
	q.Reserve(100)
	q.stamp([]byte("{}\n"))
	if q.opt.Reserved != 100 || q.asking {
		t.Fatalf("reservation = %d asking=%v, want 100 false", q.opt.Reserved, q.asking)
	}
}

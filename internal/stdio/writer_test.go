package stdio_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/armadra/ama-rpc/internal/stdio"
)

// recorder is an output stream that remembers every Write call and can be
// gated to simulate a host that stops reading.
type recorder struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	sizes  []int
	gate   chan struct{} // when non-nil, each Write waits for a token
	writes chan struct{} // signalled when a Write starts
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.writes != nil {
		r.writes <- struct{}{}
	}
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sizes = append(r.sizes, len(p))
	return r.buf.Write(p)
}

func (r *recorder) lines(t *testing.T) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.TrimSuffix(r.buf.String(), "\n")
	if s == "" {
		return nil
	}
	out := strings.Split(s, "\n")
	for i, l := range out {
		if !json.Valid([]byte(l)) {
			t.Fatalf("line %d is not JSON: %q", i, l)
		}
	}
	return out
}

func TestWriterKeepsOrderAndWholeLines(t *testing.T) {
	rec := &recorder{}
	w := stdio.NewWriter(rec, stdio.WriterOptions{MaxItems: 4})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				w.Send(map[string]int{"g": g, "i": i})
			}
		}()
	}
	wg.Wait()
	w.Close()
	next := map[int]int{}
	for _, l := range rec.lines(t) {
		var v struct{ G, I int }
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		if v.I != next[v.G] {
			t.Fatalf("goroutine %d: got %d, want %d", v.G, v.I, next[v.G])
		}
		next[v.G]++
	}
	for g := 0; g < 8; g++ {
		if next[g] != 200 {
			t.Fatalf("goroutine %d: %d lines", g, next[g])
		}
	}
}

// TestWriterWritesLongLinesWhole: a long line goes out with one write
// call (the kernel takes it in as the pipe allows), never cut into many.
func TestWriterWritesLongLinesWhole(t *testing.T) {
	rec := &recorder{}
	w := stdio.NewWriter(rec, stdio.WriterOptions{DeltaLine: deltaLine})
	big := strings.Repeat("é", 100_000) // 200 000 bytes
	w.Send(map[string]string{"big": big})
	w.Send(map[string]string{"small": "x"})
	w.Close()
	if len(rec.sizes) != 2 || rec.sizes[0] < 200_000 {
		t.Fatalf("writes %v, want the long line in one write, then the short one", rec.sizes)
	}
	lines := rec.lines(t)
	if len(lines) != 2 || !strings.Contains(lines[0], big) {
		t.Fatalf("lines damaged: %d lines", len(lines))
	}
}

// deltaLine renders a delta in the shape of the native message_update
// (the protocol's job; the writer only merges).
func deltaLine(dst []byte, typ string, idx int, delta []byte, _ any) []byte {
	b, _ := json.Marshal(map[string]any{"type": "message_update",
		"assistantMessageEvent": map[string]any{"type": typ, "contentIndex": idx, "delta": string(delta)}})
	return append(append(dst, b...), '\n')
}

func TestWriterMergesOnlyConsecutiveDeltasOfOneBlock(t *testing.T) {
	rec := &recorder{gate: make(chan struct{}), writes: make(chan struct{}, 100)}
	w := stdio.NewWriter(rec, stdio.WriterOptions{DeltaLine: deltaLine})
	u := &struct{ n int }{}
	w.Send(map[string]string{"type": "first"}) // the writer picks this up and blocks in Write
	<-rec.writes
	w.SendDelta("text_delta", 0, "a", u)
	w.SendDelta("text_delta", 0, "b", u)
	w.SendDelta("text_delta", 1, "c", u)     // other block: not merged
	w.SendDelta("thinking_delta", 1, "d", u) // other kind: not merged
	w.Send(map[string]string{"type": "barrier"})
	w.SendDelta("text_delta", 1, "e", u) // after another event: not merged
	w.SendDelta("text_delta", 1, "f", u)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case rec.gate <- struct{}{}:
			case <-done:
				return
			}
		}
	}()
	w.Close()
	close(done)
	var got []string
	for _, l := range rec.lines(t) {
		var v struct {
			Type string
			E    struct {
				Type         string
				ContentIndex int
				Delta        string
			} `json:"assistantMessageEvent"`
		}
		_ = json.Unmarshal([]byte(l), &v)
		if v.Type == "message_update" {
			got = append(got, fmt.Sprintf("%s/%d/%s", v.E.Type, v.E.ContentIndex, v.E.Delta))
		} else {
			got = append(got, v.Type)
		}
	}
	want := "first text_delta/0/ab text_delta/1/c thinking_delta/1/d barrier text_delta/1/ef"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
	if st := w.Stats(); st.MergedDeltas != 2 {
		t.Fatalf("merged %d, want 2", st.MergedDeltas)
	}
}

// A host that does not read: Send blocks once the queue is full, and
// nothing is lost when it reads again.
func TestWriterBackpressureBoundsQueue(t *testing.T) {
	rec := &recorder{gate: make(chan struct{}), writes: make(chan struct{}, 1000)}
	w := stdio.NewWriter(rec, stdio.WriterOptions{MaxItems: 8})
	sent := make(chan int, 100)
	go func() {
		for i := 0; i < 100; i++ {
			w.Send(map[string]int{"i": i})
			sent <- i
		}
		close(sent)
	}()
	<-rec.writes // the writer holds line 0 and waits for the host
	// With line 0 in the writer and 8 queued, the sender blocks on the 10th.
	for i := 0; i < 9; i++ {
		<-sent
	}
	select {
	case i := <-sent:
		t.Fatalf("send %d returned while the queue was full", i)
	default:
	}
	if st := w.Stats(); st.PeakItems > 8 {
		t.Fatalf("queue grew to %d items", st.PeakItems)
	}
	go func() {
		for {
			rec.gate <- struct{}{}
		}
	}()
	for range sent {
	}
	w.Close()
	if n := len(rec.lines(t)); n != 100 {
		t.Fatalf("%d lines written, want 100", n)
	}
}

func TestWriterDropsNothingAfterFlush(t *testing.T) {
	rec := &recorder{}
	w := stdio.NewWriter(rec, stdio.WriterOptions{DeltaLine: deltaLine})
	for i := 0; i < 1000; i++ {
		w.SendDelta("text_delta", 0, "x", nil)
	}
	w.Flush()
	var text strings.Builder
	for _, l := range rec.lines(t) {
		var v struct {
			E struct{ Delta string } `json:"assistantMessageEvent"`
		}
		_ = json.Unmarshal([]byte(l), &v)
		text.WriteString(v.E.Delta)
	}
	if text.String() != strings.Repeat("x", 1000) {
		t.Fatalf("rebuilt %d chars", text.Len())
	}
	w.Close()
}

// Joinable lines merge only with the queued line right before them, and
// only when head and tail are the same; deltas and whole lines never join
// them.
func TestWriterJoinsOnlyConsecutiveLinesOfOneHead(t *testing.T) {
	rec := &recorder{gate: make(chan struct{}), writes: make(chan struct{}, 100)}
	w := stdio.NewWriter(rec, stdio.WriterOptions{DeltaLine: deltaLine})
	headA, headB := []byte(`{"k":"a","text":"`), []byte(`{"k":"b","text":"`)
	tail := []byte("\"}\n")
	w.Send(map[string]string{"type": "first"}) // the writer picks this up and blocks in Write
	<-rec.writes
	w.SendJoinable(headA, []byte("x"), tail)
	body := []byte(`\u00e9`) // the writer copies body: reusing it is fine
	w.SendJoinable(headA, body, tail)
	copy(body, "zzzzzz")
	w.SendJoinable(headB, []byte("y"), tail) // other head: not joined
	w.SendJoinable(headA, []byte("1"), tail) // not right after the last A
	w.SendJoinable(headA, []byte("2"), []byte("\",\"more\":1}\n"))
	w.SendDelta("text_delta", 0, "d", nil)
	w.SendJoinable(headA, []byte("3"), tail) // after a delta: not joined
	w.Send(map[string]string{"type": "barrier"})
	w.SendJoinable(headA, []byte("4"), tail)
	w.SendJoinable(headA, []byte("5"), tail)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case rec.gate <- struct{}{}:
			case <-done:
				return
			}
		}
	}()
	w.Close()
	close(done)
	got := strings.Join(rec.lines(t), "\n")
	want := strings.Join([]string{`{"type":"first"}`, `{"k":"a","text":"x\u00e9"}`, `{"k":"b","text":"y"}`, `{"k":"a","text":"1"}`,
		`{"k":"a","text":"2","more":1}`, `{"assistantMessageEvent":{"contentIndex":0,"delta":"d","type":"text_delta"},"type":"message_update"}`,
		`{"k":"a","text":"3"}`, `{"type":"barrier"}`, `{"k":"a","text":"45"}`}, "\n")
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if st := w.Stats(); st.MergedDeltas != 2 || st.Lines != 9 {
		t.Fatalf("merged %d in %d lines, want 2 in 9", st.MergedDeltas, st.Lines)
	}
}

// WaitRoom holds a sender back while a line that fills the queue is being
// written, and lets it go once that line is out.
func TestWriterWaitRoom(t *testing.T) {
	rec := &recorder{gate: make(chan struct{}), writes: make(chan struct{}, 10)}
	w := stdio.NewWriter(rec, stdio.WriterOptions{MaxBytes: 1 << 10})
	w.WaitRoom(1 << 10) // idle: returns at once
	w.SendLine([]byte(`{"type":"` + strings.Repeat("x", 1<<10) + `"}` + "\n"))
	<-rec.writes // the writer is in Write with the big line
	returned := make(chan struct{})
	go func() {
		w.WaitRoom(1 << 10)
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("WaitRoom returned while the big line was being written")
	default:
	}
	rec.gate <- struct{}{} // the big line is written
	<-returned
	w.SendLine([]byte(`{"type":"after"}` + "\n"))
	<-rec.writes
	rec.gate <- struct{}{}
	w.Close()
	if got := rec.lines(t); len(got) != 2 {
		t.Fatalf("%d lines, want 2", len(got))
	}
}

// TestWriterSendPieces: a line written in pieces is whole on the wire
// between the lines sent around it (no other line cuts in), each piece
// goes through ValidUTF8, and it counts its size against the queue's
// bound like a line of that size: it waits while a line is in flight.
func TestWriterSendPieces(t *testing.T) {
	rec := &recorder{gate: make(chan struct{}), writes: make(chan struct{}, 1000)}
	w := stdio.NewWriter(rec, stdio.WriterOptions{MaxBytes: 1000})
	w.Send(map[string]int{"first": 1})
	<-rec.writes // the writer holds the first line, the host does not read
	queued := make(chan struct{})
	go func() {
		w.SendPieces(1000, func(emit func([]byte)) {
			emit([]byte(`{"pieces":[`))
			for i := range 300 {
				if i > 0 {
					emit([]byte(","))
				}
				emit(fmt.Appendf(nil, `"p%d"`, i))
			}
			emit([]byte(`],"bad":"` + "\xff" + `"}` + "\n"))
		})
		close(queued)
	}()
	select {
	case <-queued:
		t.Fatal("a line of the queue's whole size was queued while another was in flight")
	case <-rec.writes: // (the gate holds the writer; nothing else may write)
		t.Fatal("a second write started while the first waits")
	default:
	}
	go func() {
		for {
			rec.gate <- struct{}{}
		}
	}()
	<-queued
	var wg sync.WaitGroup
	for g := range 4 { // lines racing the pieces
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Send(map[string]int{"g": g})
		}()
	}
	wg.Wait()
	w.Close()
	lines := rec.lines(t)
	if len(lines) != 6 {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	var v struct {
		Pieces []string
		Bad    string
	}
	if err := json.Unmarshal([]byte(lines[1]), &v); err != nil || len(v.Pieces) != 300 || v.Pieces[299] != "p299" || v.Bad != "\ufffd" {
		t.Fatalf("the pieces' line: %q (%v)", lines[1], err)
	}
}

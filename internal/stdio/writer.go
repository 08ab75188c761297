package stdio

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/internal/jsonstr"
	"github.com/armadra/ama-rpc/internal/memlimit"
)

// CollectBytes is the size from which a line is huge: once out, its
// buffer is collected at once (memlimit.Written).
const CollectBytes = memlimit.HugeBytes

// Default bounds of the outbound queue. Deltas of one content block merge
// into a single queued item, so a long streamed reply costs one item whose
// size is bounded by the reply itself.
const (
	DefaultMaxQueuedItems = 1024
	DefaultMaxQueuedBytes = 8 << 20
)

// Writer owns the output stream. Exactly one goroutine (started by
// NewWriter) writes to it; everything else enqueues complete lines (or,
// SendPieces, a line the writer goroutine produces piece by piece). Lines
// are written whole and in enqueue order, each with one write call (a
// SendPieces line: one per piece).
//
// Backpressure: when the queue holds MaxItems lines or MaxBytes bytes,
// Send blocks until the writer catches up, so memory stays bounded when the
// host reads slowly. SendDelta never blocks while it can merge: consecutive
// deltas of the same content block are joined into the queued item (the
// host rebuilds the same text); nothing else is ever merged, reordered or
// dropped.
type Writer struct {
	out      io.Writer
	log      *zap.Logger
	maxItems int
	maxBytes int
	render   func(dst []byte, typ string, idx int, delta []byte, usage any) []byte

	mu       sync.Mutex
	space    *sync.Cond // signalled when the queue shrinks
	ready    *sync.Cond // signalled when an item arrives or on close
	q        []*outItem
	qBytes   int
	busy     bool // the writer goroutine holds a popped item
	closed   bool
	done     chan struct{}
	stats    WriterStats
	writeErr error
	broken   chan struct{} // closed at the first write error
	vw       *vecWriter    // writes SendVector's vectors (writer goroutine only)
}

// WriterStats are counters for tests and benchmarks.
type WriterStats struct {
	Lines          int64 // lines written
	Bytes          int64 // bytes written
	MergedDeltas   int64 // deltas folded into an already queued item
	PeakItems      int   // largest queue length seen
	PeakQueueBytes int   // largest queued byte count seen
	Queued         int   // queue length now (at the Stats call)
}

type outItem struct {
	line []byte // a complete line; nil for a delta or joinable item

	// A joinable item (SendJoinable) is the line head+body+tail; head and
	// tail are shared with the sender and never written to.
	head, body, tail []byte

	deltaType string
	deltaIdx  int
	delta     []byte
	usage     any // the protocol's, handed over by SendDelta; nil: none

	// A line written in pieces (SendPieces): fill produces them on the
	// writer goroutine; n is about the line's length. A line written in
	// vectors (SendVector): vec produces them.
	fill func(emit func(piece []byte))
	vec  func(emit func(vec [][]byte))
	n    int

	seq *Seq // numbers the line when it is written (seq.go); nil: none
}

func (it *outItem) size() int {
	if it.line != nil {
		return len(it.line)
	}
	if it.fill != nil || it.vec != nil {
		return it.n
	}
	if it.head != nil {
		return len(it.head) + len(it.body) + len(it.tail)
	}
	return len(it.delta) + 160
}

// WriterOptions configure NewWriter. Zero values select the defaults.
type WriterOptions struct {
	Log      *zap.Logger
	MaxItems int
	MaxBytes int
	// DeltaLine renders a (merged) delta as one line ending in '\n',
	// appended to dst, with the usage of the last merged SendDelta (nil:
	// none). The protocol owns the shape (the native message_update) and
	// the usage's type; the writer owns when deltas merge. SendDelta needs
	// it; a writer without it only sends whole lines.
	DeltaLine func(dst []byte, typ string, idx int, delta []byte, usage any) []byte
}

// NewWriter starts the writer goroutine for out.
func NewWriter(out io.Writer, opt WriterOptions) *Writer {
	w := &Writer{out: out, log: opt.Log, maxItems: opt.MaxItems, maxBytes: opt.MaxBytes, render: opt.DeltaLine,
		done: make(chan struct{}), broken: make(chan struct{})}
	if w.log == nil {
		w.log = zap.NewNop()
	}
	if w.maxItems <= 0 {
		w.maxItems = DefaultMaxQueuedItems
	}
	if w.maxBytes <= 0 {
		w.maxBytes = DefaultMaxQueuedBytes
	}
	w.space = sync.NewCond(&w.mu)
	w.ready = sync.NewCond(&w.mu)
	go w.loop()
	return w
}

// SendLine enqueues one complete line (ending in '\n'), blocking while the
// queue is full. Lines sent after Close are discarded.
func (w *Writer) SendLine(line []byte) { w.SendLineSeq(line, nil) }

// SendLineSeq is SendLine for a line of q's stream: it is numbered and
// kept when it is written (nil q: SendLine).
func (w *Writer) SendLineSeq(line []byte, q *Seq) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.push(&outItem{line: line, seq: q})
}

// Send encodes v and enqueues it. Encoding failures are logged; they
// indicate a programming error, since every value sent is plain data.
func (w *Writer) Send(v any) { w.SendSeq(v, nil) }

// SendSeq is Send for a line of q's stream (nil q: Send).
func (w *Writer) SendSeq(v any, q *Seq) {
	line, err := Marshal(v)
	if err != nil {
		w.log.Error("encode output line", zap.Error(err))
		return
	}
	w.SendLineSeq(line, q)
}

// SendDelta enqueues a text, thinking or tool-call delta (rendered by
// WriterOptions.DeltaLine), merging it into the last queued item when that
// is a delta of the same kind and block. usage (nil: none) is handed over
// to DeltaLine: the caller does not change it after the call.
func (w *Writer) SendDelta(typ string, idx int, delta string, usage any) {
	w.SendDeltaSeq(typ, idx, delta, usage, nil)
}

// SendDeltaSeq is SendDelta for a delta of q's stream: it merges only
// with a delta of the same stream, and the merged line is numbered once.
func (w *Writer) SendDeltaSeq(typ string, idx int, delta string, usage any, q *Seq) {
	if w.render == nil {
		panic(fmt.Sprintf("stdio: SendDelta(%s) on a writer without WriterOptions.DeltaLine", typ))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.q); n > 0 {
		last := w.q[n-1]
		if last.line == nil && last.head == nil && last.fill == nil && last.vec == nil && last.deltaType == typ && last.deltaIdx == idx && (last.usage != nil) == (usage != nil) && last.seq == q {
			last.delta = append(last.delta, delta...)
			if usage != nil {
				last.usage = usage
			}
			w.qBytes += len(delta)
			w.stats.MergedDeltas++
			w.notePeak()
			return
		}
	}
	w.push(&outItem{deltaType: typ, deltaIdx: idx, delta: append(make([]byte, 0, len(delta)+64), delta...), usage: usage, seq: q})
}

// SendJoinable enqueues the line head+body+tail (tail ends in '\n'). When
// the last queued item is a joinable one with the same head and tail, body
// is appended to its body instead: the writer is behind, and the two lines
// become one. The caller guarantees that the joined line means the same as
// the separate ones (ACP: head and tail frame one JSON string, body is a
// piece of it escaped on its own, so the joined string is the
// concatenation of the pieces). head and tail are kept, not copied, and
// must not change afterwards; body is copied. The line is written as
// built (no ValidUTF8 pass): the caller makes it valid.
func (w *Writer) SendJoinable(head, body, tail []byte) { w.SendJoinableSeq(head, body, tail, nil) }

// SendJoinableSeq is SendJoinable for a line of q's stream: it joins only
// with a line of the same stream, and the joined line is numbered once.
func (w *Writer) SendJoinableSeq(head, body, tail []byte, q *Seq) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.q); n > 0 {
		last := w.q[n-1]
		if last.head != nil && last.seq == q && bytes.Equal(last.head, head) && bytes.Equal(last.tail, tail) {
			last.body = append(last.body, body...)
			w.qBytes += len(body)
			w.stats.MergedDeltas++
			w.notePeak()
			return
		}
	}
	w.push(&outItem{head: head, body: append(make([]byte, 0, len(body)+64), body...), tail: tail, seq: q})
}

// SendPieces enqueues one line that is written in pieces, never built
// whole: when its turn comes, the writer goroutine calls fill, which
// calls emit with each piece in order; the pieces joined are the line
// (ending in '\n'). emit writes the piece before it returns, so fill may
// reuse its buffer; nothing else is written between the pieces. size is
// about the line's length: the line waits for room in the queue as a line
// of that size would (backpressure), while only a piece is in memory at a
// time. Each piece must hold whole UTF-8 sequences (it goes through
// ValidUTF8 on its own), and fill must read only data nobody changes (it
// runs on the writer goroutine, after SendPieces has returned). For
// answers as large as a session (get_tree).
func (w *Writer) SendPieces(size int, fill func(emit func(piece []byte))) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.push(&outItem{fill: fill, n: max(size, 1)})
}

// SendVector is SendPieces for a line whose pieces are mostly bytes that
// already exist (get_tree: the session's entries as they are stored):
// fill calls emit with vectors of pieces, in order, and the pieces of all
// the vectors joined are the line (ending in '\n'). emit writes a vector
// before it returns, so fill may reuse the pieces' buffers afterwards; to
// a file or pipe it is written with writev(2) (as many calls as IOV_MAX
// and the kernel need; the pieces are not copied), to any other output
// joined into one Write. The pieces are written as they are, without the
// ValidUTF8 pass: fill makes each one wire-clean (jsonstr.WireClean
// holds), as SendJoinable's caller does. size and fill's rules are those
// of SendPieces.
func (w *Writer) SendVector(size int, fill func(emit func(vec [][]byte))) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.push(&outItem{vec: fill, n: max(size, 1)})
}

// push appends it, waiting for room first. Called with mu held.
func (w *Writer) push(it *outItem) {
	size := it.size()
	w.waitRoom(size)
	if w.closed {
		return
	}
	w.q = append(w.q, it)
	w.qBytes += size
	w.notePeak()
	w.ready.Signal()
}

// WaitRoom blocks until a line of n bytes would be queued at once (or the
// writer is closed). A sender about to build a huge line calls it first,
// so that the line is not built while the previous huge one is still
// queued or being written: one such line in memory at a time, not two,
// when the host reads slowly. Another sender may take the room meanwhile;
// SendLine then waits as usual.
func (w *Writer) WaitRoom(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waitRoom(n)
}

// waitRoom waits until a line of n bytes fits. qBytes counts the line
// being written too: a huge line waits until the writer is idle, so at
// most one huge line is queued or in flight. Called with mu held.
func (w *Writer) waitRoom(n int) {
	for !w.closed && (len(w.q) > 0 || w.busy) && (len(w.q) >= w.maxItems || w.qBytes+n > w.maxBytes) {
		w.space.Wait()
	}
}

func (w *Writer) notePeak() {
	if len(w.q) > w.stats.PeakItems {
		w.stats.PeakItems = len(w.q)
	}
	if w.qBytes > w.stats.PeakQueueBytes {
		w.stats.PeakQueueBytes = w.qBytes
	}
}

func (w *Writer) loop() {
	defer close(w.done)
	var buf []byte
	for {
		w.mu.Lock()
		for len(w.q) == 0 && !w.closed {
			w.ready.Wait()
		}
		if len(w.q) == 0 {
			w.mu.Unlock()
			return
		}
		it := w.q[0]
		w.q[0] = nil
		w.q = w.q[1:]
		size := it.size()
		w.busy = true
		w.space.Broadcast() // the queue has room for one more line
		w.mu.Unlock()

		if it.fill != nil || it.vec != nil {
			n := 0
			if it.fill != nil {
				it.fill(func(piece []byte) {
					piece = ValidUTF8(piece)
					w.write(piece)
					n += len(piece)
				})
			} else {
				it.vec(func(vec [][]byte) { n += w.writeVec(vec) })
			}
			it = nil
			w.mu.Lock()
			w.qBytes -= size
			w.busy = false
			w.stats.Lines++
			w.stats.Bytes += int64(n)
			w.space.Broadcast()
			w.mu.Unlock()
			continue
		}
		line := it.line
		switch {
		case it.head != nil:
			buf = append(append(append(buf[:0], it.head...), it.body...), it.tail...)
			line = buf
		case line == nil:
			buf = w.render(buf[:0], it.deltaType, it.deltaIdx, it.delta, it.usage)
			line = buf
		}
		if it.line != nil { // DeltaLine and SendJoinable callers build valid lines (jsonstr)
			line = ValidUTF8(line)
		}
		if it.seq != nil {
			line = it.seq.stamp(line) // a kept copy: buf stays the writer's
		}
		w.write(line)
		n := len(line)
		line, it = nil, nil

		w.mu.Lock()
		w.qBytes -= size
		w.busy = false
		w.stats.Lines++
		w.stats.Bytes += int64(n)
		w.space.Broadcast()
		w.mu.Unlock()
		if cap(buf) > 1<<20 {
			buf = nil // do not pin a huge merged delta
		}
		memlimit.Written(n) // after the line is out: its buffer is garbage
	}
}

// write writes one line, or one piece of a SendPieces line, with one
// Write call (the kernel and os.File take it in as many pieces as the
// pipe needs). The first error (EPIPE: the host closed its end of stdout)
// is logged and reported through Broken; from then on output is
// discarded, so senders never block on a dead stream.
func (w *Writer) write(line []byte) {
	if w.writeErr != nil || len(line) == 0 {
		return
	}
	if _, err := w.out.Write(line); err != nil {
		w.fail(err)
	}
}

// fail records the first write error: it is logged, Broken is closed, and
// output is discarded from then on.
func (w *Writer) fail(err error) {
	w.writeErr = err
	w.log.Warn("stdout write failed (the host closed stdout?); output is discarded from now on", zap.Error(err))
	close(w.broken)
}

// writeVec writes the pieces of vec in order (SendVector) and returns
// their length; errors are those of write.
func (w *Writer) writeVec(vec [][]byte) int {
	n := 0
	for _, p := range vec {
		n += len(p)
	}
	if w.writeErr != nil || n == 0 {
		return n
	}
	if w.vw == nil {
		w.vw = newVecWriter(w.out)
	}
	if err := w.vw.write(vec, n); err != nil {
		w.fail(err)
	}
	return n
}

// Broken is closed when a write to the output failed: nobody can read
// what is sent any more (the server treats it as a disconnect).
func (w *Writer) Broken() <-chan struct{} { return w.broken }

// Flush blocks until every line enqueued before the call has been written.
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for (len(w.q) > 0 || w.busy) && !w.closed { // closed: drained by Close, or abandoned
		w.space.Wait()
	}
}

// Close writes what is queued, stops the writer goroutine and returns when
// it has exited. Later sends are discarded.
func (w *Writer) Close() {
	w.Flush()
	w.mu.Lock()
	w.closed = true
	w.ready.Broadcast()
	w.space.Broadcast()
	w.mu.Unlock()
	<-w.done
}

// ValidUTF8 makes a line safe for the wire: every byte that is not part
// of valid UTF-8 becomes the escape \ufffd (U+FFFD), as encoding/json does
// for Go strings, and U+2028/U+2029 become \u2028/\u2029 (the wire rule).
// It is the last step before stdout, so raw JSON spliced into a line
// (entries of a session file with invalid bytes or raw separators, via
// get_entries, get_tree or entry_appended) cannot make a line invalid. In
// a JSON line such bytes can only be inside strings, where the escapes are
// valid. A clean line is returned as is, without copying.
func ValidUTF8(line []byte) []byte {
	if jsonstr.WireClean(line) {
		return line
	}
	return jsonstr.AppendWireSafe(make([]byte, 0, len(line)+64), line)
}

// Abandon gives up on output that cannot be delivered (the host stopped
// reading and the shutdown grace is over): queued lines are dropped, and
// senders blocked on the full queue, and all later ones, return at once.
// It does not wait for the writer goroutine, which may be stuck in a write.
func (w *Writer) Abandon() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for i := range w.q {
		w.q[i] = nil
	}
	w.q, w.qBytes = nil, 0
	w.ready.Broadcast()
	w.space.Broadcast()
}

// Stats returns a snapshot of the counters.
func (w *Writer) Stats() WriterStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.stats
	st.Queued = len(w.q)
	return st
}

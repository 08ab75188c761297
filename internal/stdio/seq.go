package stdio

// Replayable output (issue 35): a Seq numbers the lines of one session's
// stream and keeps the most recent of them, stamped, in a bounded ring.
// Numbers are given when a line is written, on the writer goroutine:
// that is the only place where the order of lines is final (deltas and
// joinable lines merge in the queue until then), so a merged delta is one
// line with one number and the ring holds exactly what went out. A replay
// (SendPieces with Seq.Range and Seq.Each in its fill) runs on the same
// goroutine: every line enqueued before it is written, numbered and in
// the ring, every line enqueued after it comes later with a higher
// number. No gap, no duplicate, without a lock around the ring.

import "strconv"

// Default bounds of a Seq's ring: whichever is reached first evicts the
// oldest line. A line larger than the byte bound is written and numbered
// but not kept (it empties the ring: a cursor before it is expired).
const (
	DefaultRingLines = 4096
	DefaultRingBytes = 8 << 20
)

// RingOptions bound a Seq's ring. Zero values select the defaults; a
// negative MaxLines keeps nothing (every cursor but the last is expired).
type RingOptions struct {
	MaxLines int
	MaxBytes int
}

// SeqOptions configure NewSeq.
type SeqOptions struct {
	Ring RingOptions
	// Stamp appends line with the number seq written into it (the
	// protocol's place: rpc a top-level "seq", ACP params._meta) to dst.
	// line is a complete line ending in '\n'. Called on the writer
	// goroutine; it must not keep line.
	Stamp func(dst, line []byte, seq uint64) []byte
	// Reserved is the highest number the session file allows this stream
	// (0: no bound). When the numbers pass its lower half, Extend is
	// called once with the number they have reached, on the writer
	// goroutine: it must not block (the protocol persists the next
	// reservation elsewhere and calls Reserve).
	Reserved uint64
	Extend   func(reached uint64)
}

// Seq is one session's numbered stream. Lines are numbered from base+1.
// All of its state belongs to the writer goroutine (stamping, and the
// fill of a replay line), except Reserve, which is safe from any
// goroutine.
type Seq struct {
	opt  SeqOptions
	base uint64 // numbers up to base belong to earlier streams
	last uint64 // the last number given

	ring   [][]byte // circular: ring[(head+i)%len(ring)], i < n
	head   int
	n      int
	bytes  int
	lo     uint64 // number of the oldest kept line; last+1 when none
	maxLn  int
	maxB   int
	asking bool // Extend was called and Reserve has not answered

	resv chan uint64 // a newer reservation (Reserve → writer goroutine)
}

// NewSeq starts a stream whose first line is numbered base+1.
func NewSeq(base uint64, opt SeqOptions) *Seq {
	q := &Seq{opt: opt, base: base, last: base, lo: base + 1, maxLn: opt.Ring.MaxLines, maxB: opt.Ring.MaxBytes, resv: make(chan uint64, 1)}
	if q.maxLn == 0 {
		q.maxLn = DefaultRingLines
	}
	if q.maxLn < 0 {
		q.maxLn = 0
	}
	if q.maxB <= 0 {
		q.maxB = DefaultRingBytes
	}
	return q
}

// Base is the number before the stream's first line: a cursor that asks
// for every line of the stream.
func (q *Seq) Base() uint64 { return q.base }

// Reserve hands the stream a newer reservation (the answer to Extend).
func (q *Seq) Reserve(until uint64) {
	for {
		select {
		case q.resv <- until:
			return
		case old := <-q.resv: // keep the higher one
			until = max(until, old)
		}
	}
}

// stamp numbers line, keeps it and returns the stamped line (writer
// goroutine).
func (q *Seq) stamp(line []byte) []byte {
	select {
	case r := <-q.resv:
		q.opt.Reserved, q.asking = max(q.opt.Reserved, r), false
	default:
	}
	q.last++
	if r := q.opt.Reserved; r > 0 && q.opt.Extend != nil && !q.asking && q.last-q.base > (r-q.base)/2 {
		q.asking = true
		q.opt.Extend(q.last)
	}
	out := q.opt.Stamp(make([]byte, 0, len(line)+32), line, q.last)
	q.keep(out)
	return out
}

// keep appends a stamped line to the ring, evicting the oldest lines.
func (q *Seq) keep(line []byte) {
	if q.maxLn == 0 || len(line) > q.maxB {
		q.drop(q.n)
		q.lo = q.last + 1
		return
	}
	if len(q.ring) < q.maxLn && q.n == len(q.ring) {
		q.grow()
	}
	for q.n > 0 && (q.n >= q.maxLn || q.bytes+len(line) > q.maxB) {
		q.drop(1)
	}
	if q.n == 0 {
		q.lo = q.last
	}
	q.ring[(q.head+q.n)%len(q.ring)] = line
	q.n++
	q.bytes += len(line)
}

// grow doubles the ring's slots (up to maxLn), keeping the order.
func (q *Seq) grow() {
	size := min(max(2*len(q.ring), 16), q.maxLn)
	next := make([][]byte, size)
	for i := 0; i < q.n; i++ {
		next[i] = q.ring[(q.head+i)%len(q.ring)]
	}
	q.ring, q.head = next, 0
}

// drop evicts the k oldest lines.
func (q *Seq) drop(k int) {
	for ; k > 0 && q.n > 0; k-- {
		q.bytes -= len(q.ring[q.head])
		q.ring[q.head] = nil
		q.head = (q.head + 1) % len(q.ring)
		q.n--
		q.lo++
	}
}

// Range reports which lines follow the cursor since: from..to (from >
// to: none yet), or false when the cursor is outside retention (older
// than the oldest kept line's predecessor, or newer than the last line
// given: a cursor of another stream). Writer goroutine only (a replay's
// fill).
func (q *Seq) Range(since uint64) (from, to uint64, ok bool) {
	if since > q.last || since+1 < q.lo {
		return 0, 0, false
	}
	return since + 1, q.last, true
}

// Each calls emit with every kept line numbered after since, in order.
// Writer goroutine only; Range(since) must have been ok.
func (q *Seq) Each(since uint64, emit func(line []byte)) {
	skip := 0
	if since >= q.lo {
		skip = int(since - q.lo + 1)
	}
	for i := skip; i < q.n; i++ {
		emit(q.ring[(q.head+i)%len(q.ring)])
	}
}

// AppendSeq appends n as a JSON number (protocol stamps).
func AppendSeq(dst []byte, n uint64) []byte { return strconv.AppendUint(dst, n, 10) }

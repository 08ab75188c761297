package session

import (
	"fmt"

	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/store"
)

// CustomSeq is the custom entry that reserves the line numbers (seq) of a
// session's replayable stream (issue 35): {"until": n}. A process that
// streams the session numbers its lines above every reservation already
// in the file and writes its own before the first of them, so the numbers
// keep growing across --resume, switch_session and session/load, even
// after a SIGKILL. ama keeps custom entries of unknown types and ignores
// them.
const CustomSeq = "ama-rpc.seq"

// SeqBlock is how many numbers one reservation covers; the stream asks
// for the next block when it has used half of it (ExtendSeq).
const SeqBlock = 1 << 32

type seqData struct {
	Until uint64 `json:"until"`
}

// seqReserved is the highest reservation in the session's entries (every
// branch: a rewind does not give numbers back).
func (st *state) seqReserved() uint64 {
	var top uint64
	for _, e := range st.tree.Entries() {
		if e.Type != store.TypeCustom || e.CustomType() != CustomSeq {
			continue
		}
		if d, err := store.CustomData[seqData](e); err == nil {
			top = max(top, d.Until)
		}
	}
	return top
}

// ReserveSeq reserves block numbers for a new stream of the session and
// returns its base (the stream numbers lines from base+1) and the end of
// the reservation. The reservation is appended to the session before it
// returns (written to the file when the session has one: a lazily created
// file gets it at creation, before any line of a run).
func (s *Session) ReserveSeq(block uint64) (base, until uint64, err error) {
	type out struct{ base, until uint64 }
	o, err := call(s, func(st *state) out {
		base := st.seqReserved()
		until := base + block
		st.appendEntry(store.CustomEntry(CustomSeq, seqData{Until: until}))
		return out{base, until}
	})
	if err != nil {
		return 0, 0, fmt.Errorf("reserve seq: %w", err)
	}
	return o.base, o.until, nil
}

// OpenSeq reserves a block of numbers (ReserveSeq) and starts the
// session's numbered stream over them, with the protocol's ring bounds
// and stamp. The stream asks for the next block when it has used half of
// its own: ExtendSeq runs on a goroutine of its own (Extend is called on
// the writer goroutine, and the actor may be waiting on the writer).
func (s *Session) OpenSeq(ring stdio.RingOptions, stamp func(dst, line []byte, seq uint64) []byte) (*stdio.Seq, error) {
	base, until, err := s.ReserveSeq(SeqBlock)
	if err != nil {
		return nil, err
	}
	var q *stdio.Seq
	q = stdio.NewSeq(base, stdio.SeqOptions{Ring: ring, Stamp: stamp, Reserved: until,
		Extend: func(reached uint64) {
			go func() {
				next := reached + SeqBlock
				if s.ExtendSeq(next) == nil {
					q.Reserve(next)
				}
			}()
		}})
	return q, nil
}

// ExtendSeq records a further reservation (a stream that used half of
// its block) unless one as high is already recorded.
func (s *Session) ExtendSeq(until uint64) error {
	return s.do(func(st *state) {
		if st.seqReserved() < until {
			st.appendEntry(store.CustomEntry(CustomSeq, seqData{Until: until}))
		}
	})
}

// AtState calls f on the session's actor with its State while no event is
// being delivered: every event published before f reached the
// subscribers before it, every later one reaches them after. The caller
// positions something in its output stream exactly (a replay's answer).
// f must not call into the session.
func (s *Session) AtState(f func(State)) error {
	return s.do(func(st *state) {
		snap := st.snapshot()
		s.bus.Hold(func() { f(snap) })
	})
}

package rpc

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/rpc/internal/wirecode"
	"github.com/armadra/ama-rpc/session"
)

// The replayable event stream (issue 35), native side.
//
// A client that declares the capability event_seq gets a top-level "seq"
// on every event line of the current session: the lines forward writes,
// i.e. everything the session's bus publishes. Responses carry none (they
// answer one command; a host that missed one asks again), nor do events
// no session publishes (Server.Send: a host adapter's notifications, the
// startup hooks). Numbers are per session and given when the line is
// written (stdio.Seq): a merged delta is one line with one number.
// replay{sinceSeq} answers with a snapshot, then the lines after sinceSeq
// from the ring, then the live ones follow: see handleReplay.

// CapEventSeq is the client capability that numbers event lines.
const CapEventSeq = "event_seq"

// wantsEventSeq is the one gate of the seq field: whether the client's
// declared capabilities (set_client_capabilities) ask for numbered event
// lines. Clients that do not declare it see the output of before issue 35
// byte for byte.
func wantsEventSeq(declared map[string]bool) bool { return declared[CapEventSeq] }

// feed is one attachment of a session to the output: the subscriber of
// its bus and, while the capability is on, its numbered stream.
type feed struct {
	s    *Server
	sess *session.Session
	q    atomic.Pointer[stdio.Seq]
}

// newFeed prepares the attachment of sess; with the capability on, its
// stream is opened first (the reservation is written before the first
// numbered line).
func (s *Server) newFeed(sess *session.Session) *feed {
	f := &feed{s: s, sess: sess}
	if s.seqOn.Load() {
		f.q.Store(s.openSeq(sess))
	}
	return f
}

// forward is the bus subscriber (under the bus lock, in publish order).
func (f *feed) forward(e events.Event) { f.s.forward(e, f.q.Load()) }

// openSeq reserves numbers in sess's file and starts its stream (nil when
// the session cannot reserve: it is closing).
func (s *Server) openSeq(sess *session.Session) *stdio.Seq {
	q, err := sess.OpenSeq(s.opts.Replay, stampRPC)
	if err != nil {
		s.log.Warn("event seq: no reservation", zap.Error(err))
		return nil
	}
	return q
}

// setEventSeq turns numbering on or off for the current session
// (set_client_capabilities, dispatcher) and returns the stream's base
// (nil: off).
func (s *Server) setEventSeq(on bool) *uint64 {
	s.seqOn.Store(on)
	s.mu.Lock()
	f := s.feed
	s.mu.Unlock()
	if f == nil {
		return nil
	}
	if !on {
		f.q.Store(nil)
		return nil
	}
	if f.q.Load() == nil {
		f.q.CompareAndSwap(nil, s.openSeq(f.sess))
	}
	if q := f.q.Load(); q != nil {
		base := q.Base()
		return &base
	}
	return nil
}

// stampRPC writes "seq" as the last top-level member of an event line.
func stampRPC(dst, line []byte, seq uint64) []byte {
	if len(line) < 2 || line[len(line)-2] != '}' || line[len(line)-1] != '\n' {
		return append(dst, line...) // every event line is an object; never reached
	}
	dst = append(dst, line[:len(line)-2]...)
	dst = append(dst, `,"seq":`...)
	dst = stdio.AppendSeq(dst, seq)
	return append(dst, "}\n"...)
}

// Run statuses of a replay snapshot.
const (
	statusIdle            = "idle"
	statusRunning         = "running"
	statusWaitingApproval = "waiting_approval"
)

// replayStatus is the snapshot's status, read from the owners of the
// facts: the session's State (a run, compaction or retry, and a run parked
// by a durable approval's defer: WaitingApproval) and the approval broker
// (a run waiting for a permission_response). Taken under the session's bus
// lock (Session.AtState), so it is the status as of the last line before
// the replayed ones end.
func replayStatus(st session.State, pending []string) string {
	switch {
	case len(pending) > 0 || len(st.WaitingApproval) > 0:
		return statusWaitingApproval
	case st.IsStreaming || st.IsCompacting || st.IsRetrying:
		return statusRunning
	}
	return statusIdle
}

// openRequestIDs are the open requests of a snapshot: those waiting in the
// broker now and the durable ones parked by defer (each once).
func openRequestIDs(st session.State, broker []string) []string {
	out := append([]string{}, broker...)
	for _, w := range st.WaitingApproval {
		if !slices.Contains(out, w.RequestID) {
			out = append(out, w.RequestID)
		}
	}
	return out
}

// replaySnapshot is the data of a replay's success response: what a host
// needs to rebuild before the replayed lines (fromSeq..toSeq) follow.
type replaySnapshot struct {
	Status string `json:"status"`
	// PendingRequests are the permission_request ids waiting for an
	// answer (their permission_request lines may be older than the ring:
	// get_entries does not hold them).
	PendingRequests []string      `json:"pendingRequests"`
	State           session.State `json:"state"`
	FromSeq         uint64        `json:"fromSeq"`
	ToSeq           uint64        `json:"toSeq"`
}

type replayParams struct {
	SinceSeq *float64 `json:"sinceSeq"`
	// SessionID (optional) is the session the cursor belongs to: numbers
	// are per session, and another session's cursor is expired, never
	// read as one of the current stream.
	SessionID string `json:"sessionId"`
}

// handleReplay answers replay{sinceSeq}. The answer is positioned in the
// session's stream: Session.AtState holds the bus (no event is being
// delivered) while the snapshot is taken and the answer enqueued, and the
// answer is a line the writer goroutine fills (SendPieces), where the
// stream's numbers and ring live. When the writer reaches it, every line
// enqueued before is written and kept; it writes the response, then the
// kept lines numbered after sinceSeq; every line enqueued after it comes
// next with the following numbers. A cursor outside retention answers
// cursor_expired, nothing else.
func handleReplay(s *Server, _ *command, p *replayParams) (replayAnswer, error) {
	if p.SinceSeq == nil || *p.SinceSeq < 0 || *p.SinceSeq != math.Trunc(*p.SinceSeq) || *p.SinceSeq > 1<<53 {
		return replayAnswer{}, fmt.Errorf("%w: sinceSeq must be a non-negative integer (the last seq the host has)", errInvalidParams)
	}
	since := uint64(*p.SinceSeq)
	s.mu.Lock()
	f := s.feed
	s.mu.Unlock()
	var q *stdio.Seq
	if f != nil {
		q = f.q.Load()
	}
	if q == nil {
		return replayAnswer{}, fmt.Errorf("%w: replay needs the %s client capability (set_client_capabilities)", errInvalidParams, CapEventSeq)
	}
	if p.SessionID != "" && p.SessionID != f.sess.ID() {
		return replayAnswer{}, wirecode.Errorf(wirecode.ErrCursorExpired, "cursor %d is of session %s; the current session is %s (rebuild with get_state and get_entries)", since, p.SessionID, f.sess.ID())
	}
	return replayAnswer{f: f, q: q, since: since}, nil
}

// replayAnswer is replay's result, which writes its own response line:
// the snapshot, taken on the session actor under the bus lock, then the
// kept lines, in pieces on the writer goroutine (replayFill).
type replayAnswer struct {
	f     *feed
	q     *stdio.Seq
	since uint64
}

func (a replayAnswer) writeOK(s *Server, c *command) {
	reply := &command{id: c.id, name: c.name}
	err := a.f.sess.AtState(func(st session.State) {
		pending := openRequestIDs(st, s.opts.Broker.Pending())
		snap := replaySnapshot{Status: replayStatus(st, pending), PendingRequests: pending, State: st}
		s.w.SendPieces(1, s.replayFill(reply, a.q, a.since, snap))
	})
	if err != nil {
		s.fail(c, err)
	}
}

// replayFill writes a replay's answer on the writer goroutine: the
// cursor_expired error alone, or the snapshot with fromSeq..toSeq and
// then the kept lines after since.
func (s *Server) replayFill(c *command, q *stdio.Seq, since uint64, snap replaySnapshot) func(emit func([]byte)) {
	return func(emit func([]byte)) {
		from, to, ok := q.Range(since)
		if !ok {
			line, _ := stdio.Marshal(s.errorResponse(c, wirecode.Errorf(wirecode.ErrCursorExpired,
				"cursor %d is outside the retained stream of session %s (rebuild with get_state and get_entries)", since, snap.State.SessionID)))
			emit(line)
			return
		}
		snap.FromSeq, snap.ToSeq = from, to
		line, err := encodeOK(c.id, c.name, snap)
		if err != nil { // plain data: never
			line, _ = stdio.Marshal(s.errorResponse(c, fmt.Errorf("%w: %v", errEncode, err)))
			emit(line)
			return
		}
		emit(line)
		q.Each(since, emit)
	}
}

// errorResponse is the failed response to c (fail's line).
func (s *Server) errorResponse(c *command, err error) Response {
	return Response{ID: c.id, Type: "response", Command: c.name, Error: wirecode.Message(err, s.opts.Lang), Code: wirecode.Native(err)}
}

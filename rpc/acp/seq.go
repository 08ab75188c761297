package acp

import (
	"bytes"
	"encoding/json"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/session"
)

// Numbered session updates (issue 35), ACP side. A client that sets
// clientCapabilities._meta["ama/seq"] to true in initialize gets, on every
// session/update notification of a session (agent message and thought
// chunks included), params._meta["ama/seq"]: a number per session that
// grows by one per line written, kept above every number an earlier
// process gave the session (the reservation in its file,
// session.ReserveSeq). A gap tells the client it lost updates; ACP has no
// replay method: it recovers with session/load. Responses, requests to
// the client (session/request_permission) and _ama/notice carry none.
// Clients that do not opt in get the lines of before, byte for byte.

// seqMetaKey is the _meta key of the number (ACP reserves _meta for
// extensions; ama's keys are prefixed "ama/", as "ama/sandbox").
const seqMetaKey = "ama/seq"

// seqStreams holds the numbered streams by session id.
type seqStreams struct {
	on atomic.Bool // the client opted in (initialize)
	m  sync.Map    // session id → *stdio.Seq
}

// wantsSeq is the one gate of the number: whether the client's
// initialize clientCapabilities opt in (_meta["ama/seq"]: true).
func wantsSeq(clientCapabilities json.RawMessage) bool {
	var caps struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(clientCapabilities, &caps) != nil {
		return false
	}
	return bytes.Equal(caps.Meta[seqMetaKey], []byte("true"))
}

// openSeq starts sess's numbered stream when the client opted in (before
// the session's first event is subscribed). ACP has no replay method, so
// the stream keeps no lines.
func (s *Server) openSeq(sess *session.Session) *stdio.Seq {
	if !s.seqs.on.Load() {
		return nil
	}
	q, err := sess.OpenSeq(stdio.RingOptions{MaxLines: -1}, stampACP)
	if err != nil {
		s.log.Warn("ama/seq: no reservation", zap.Error(err))
		return nil
	}
	s.seqs.m.Store(sess.ID(), q)
	return q
}

// seqOf returns the numbered stream of a session (nil: none).
func (s *Server) seqOf(sessionID string) *stdio.Seq {
	if !s.seqs.on.Load() {
		return nil
	}
	if q, ok := s.seqs.m.Load(sessionID); ok {
		return q.(*stdio.Seq)
	}
	return nil
}

// stampACP writes ,"_meta":{"ama/seq":n} as the last member of params: a
// session/update line ends with the params object and the envelope
// ("…}}\n"; encodeEnvelope and chunks.go put params last).
func stampACP(dst, line []byte, seq uint64) []byte {
	if len(line) < 3 || string(line[len(line)-3:]) != "}}\n" {
		return append(dst, line...) // never reached: every numbered line is a session/update
	}
	dst = append(dst, line[:len(line)-3]...)
	dst = append(dst, `,"_meta":{"`+seqMetaKey+`":`...)
	dst = stdio.AppendSeq(dst, seq)
	return append(dst, "}}}\n"...)
}

// notifySeq writes a session/update of a numbered stream. It does what
// conn.Notify does (the same line: encodeEnvelope) but hands the line to
// the writer with its stream, which numbers it when it is written.
func (s *Server) notifySeq(q *stdio.Seq, sessionID string, update any) {
	select {
	case <-s.conn.DisconnectNotify():
		return // Notify would fail with ErrClosed
	default:
	}
	raw, err := json.Marshal(struct {
		Method string       `json:"method"`
		Params notification `json:"params"`
	}{"session/update", notification{SessionID: sessionID, Update: update}})
	if err != nil {
		s.log.Debug("session/update not sent", zap.Error(err))
		return
	}
	line, err := encodeEnvelope(raw)
	if err != nil {
		s.log.Debug("session/update not sent", zap.Error(err))
		return
	}
	s.w.SendLineSeq(line, q)
}

package acp

import (
	"context"

	"go.uber.org/zap"
)

// NoticeMethod is the extension notification that carries a notice the
// client may show: a host adapter's ui.notify, and what ama-rpc ignores
// of a session's parameters. ACP has no session update for a notice, and
// an agent_message_chunk would put it into the model's reply; clients that
// do not know the method ignore it (ACP reserves "_" names for extensions).
const NoticeMethod = "_ama/notice"

// noticeParams are the params of NoticeMethod.
type noticeParams struct {
	SessionID string `json:"sessionId"`
	Level     string `json:"level"` // info, warn, error
	Message   string `json:"message"`
}

// Notice sends a notice for the session opened last. Before the first
// session is opened it is queued and sent right after that session is
// announced (notices from a host adapter's create() or startup
// session_start handler). It reports false when it could not be sent (the
// connection is closed), so the caller can fall back to stderr.
func (s *Server) Notice(level, message string) bool {
	s.noticeMu.Lock()
	defer s.noticeMu.Unlock()
	if s.noticeTo == "" {
		s.notices = append(s.notices, noticeParams{Level: level, Message: message})
		return true
	}
	return s.sendNotice(noticeParams{SessionID: s.noticeTo, Level: level, Message: message})
}

// noticeSession makes id the session notices go to; the first one also
// gets the notices queued so far. Called once a session is announced.
func (s *Server) noticeSession(id string) {
	s.noticeMu.Lock()
	defer s.noticeMu.Unlock()
	s.noticeTo = id
	for _, n := range s.notices {
		n.SessionID = id
		s.sendNotice(n)
	}
	s.notices = nil
}

// sessionNotice sends a notice about one session (noticeMu not held).
func (s *Server) sessionNotice(id, level, message string) {
	s.sendNotice(noticeParams{SessionID: id, Level: level, Message: message})
}

func (s *Server) sendNotice(n noticeParams) bool {
	if err := s.conn.Notify(context.Background(), NoticeMethod, n); err != nil {
		s.log.Debug("notice not sent", zap.Error(err))
		return false
	}
	return true
}

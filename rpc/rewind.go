package rpc

import (
	"github.com/armadra/ama-rpc/checkpoint"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

type wireDraft struct {
	Text   string              `json:"text"`
	Images []*llm.ImageContent `json:"images,omitempty"`
}

type wireConversation struct {
	LeafID *string   `json:"leafId"`
	Draft  wireDraft `json:"draft"`
}

type wireRewind struct {
	Conversation *wireConversation  `json:"conversation,omitempty"`
	Code         *checkpoint.Result `json:"code,omitempty"`
}

func handleRewindPoints(s *Server, c *command) {
	pts, err := s.current().RewindPoints()
	out := make([]wireRewindPoint, 0, len(pts))
	for _, p := range pts {
		out = append(out, wireRewindPoint{p.EntryID, p.Text, p.Timestamp, p.HasCheckpoint})
	}
	s.answer(c, rewindPointsResult{out}, err)
}

func handleRewind(s *Server, c *command) {
	var p rewindParams
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.current().Rewind(session.RewindRequest{EntryID: p.EntryID, Mode: p.Mode, DryRun: p.DryRun, OnConflict: p.OnConflict})
	if err != nil {
		s.fail(c, err)
		return
	}
	out := wireRewind{Code: res.Code}
	if cv := res.Conversation; cv != nil {
		out.Conversation = &wireConversation{LeafID: cv.LeafID, Draft: wireDraft{Text: cv.Draft.Text, Images: cv.Draft.Images}}
	}
	s.ok(c, out)
}

func handleSummarizeFrom(s *Server, c *command) {
	var p summarizeParams
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	reply := s.later(c)
	s.current().SummarizeFrom(p.EntryID, p.Instructions, func(r session.SummarizeFromResult, err error) {
		if err != nil {
			reply(nil, err)
			return
		}
		reply(summarizeFromResult{r.LeafID, wireDraft{Text: r.Draft.Text, Images: r.Draft.Images}, r.Summary}, nil)
	})
}

func handleSummarizeUpTo(s *Server, c *command) {
	var p summarizeParams
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	s.current().SummarizeUpTo(p.EntryID, p.Instructions, compactionReply(s.later(c)))
}

func handleCompact(s *Server, c *command) {
	var p compactParams
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	s.current().Compact(p.CustomInstructions, compactionReply(s.later(c)))
}

// compactionReply answers with a CompactionResult.
func compactionReply(reply func(any, error)) func(session.CompactionResult, error) {
	return func(r session.CompactionResult, err error) {
		if err != nil {
			reply(nil, err)
			return
		}
		reply(r, nil) // session.CompactionResult is the wire shape
	}
}

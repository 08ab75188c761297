package rpc

import (
	"encoding/json"
	"math"

	"github.com/armadra/ama-rpc/trace"
)

func handleGetTrace(s *Server, c *command) {
	var p struct {
		Branch    string          `json:"branch"`
		TurnLimit json.RawMessage `json:"turnLimit"`
		Before    string          `json:"before"`
		Since     string          `json:"since"`
		TaskID    string          `json:"taskId"`
		Content   string          `json:"content"`
	}
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	q := trace.Query{Branch: p.Branch, Before: p.Before, Since: p.Since, TaskID: p.TaskID, Content: p.Content}
	if len(p.TurnLimit) > 0 && string(p.TurnLimit) != "null" {
		limit := math.NaN() // not a number: Validate rejects it
		_ = json.Unmarshal(p.TurnLimit, &limit)
		q.TurnLimit = &limit
	}
	target := s.current()
	if q.TaskID != "" {
		// A task's trace is its child session's own trace (agents.md §6.6).
		if r := s.registry(); r != nil {
			if child := r.ChildSession(q.TaskID); child != nil && q.Validate() == nil {
				target, q.TaskID = child, ""
			}
		}
	}
	res, err := target.Trace(q)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.ok(c, res) // trace's types are the wire shape
}

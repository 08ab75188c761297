package rpc

import (
	"encoding/json"
	"math"

	"github.com/armadra/ama-rpc/trace"
)

func handleGetTrace(s *Server, c *command) {
	var p traceParams
	if err := params(c, &p); err != nil {
		s.fail(c, err)
		return
	}
	q := trace.Query{Branch: p.Branch, Before: p.Before, Since: p.Since, TaskID: p.TaskID, Content: p.Content, Decisions: p.Decisions}
	if len(p.TurnLimit) > 0 && string(p.TurnLimit) != "null" {
		limit := math.NaN() // not a number: Validate rejects it
		_ = json.Unmarshal(p.TurnLimit, &limit)
		q.TurnLimit = &limit
	}
	var res *trace.Result
	var err error
	if r := s.registry(); r != nil && q.TaskID != "" {
		res, err = r.Trace(q) // the task's own trace (agents.md §6.6)
	} else {
		res, err = s.current().Trace(q)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	s.ok(c, res) // trace's types are the wire shape
}

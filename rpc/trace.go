package rpc

import (
	"encoding/json"
	"math"

	"github.com/armadra/ama-rpc/trace"
)

func handleGetTrace(s *Server, _ *command, p *traceParams) (*trace.Result, error) {
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
		return nil, err
	}
	return res, nil // trace's types are the wire shape
}

package rpc

import (
	"encoding/json"
	"math"

	"github.com/armadra/ama-rpc/internal/jsonstr"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/trace"
)

// Wire shapes of get_trace (key orders as in the reference transcript).

type wireTraceData struct {
	Trace         wireTrace     `json:"trace"`
	HasMoreBefore bool          `json:"hasMoreBefore"`
	Cursor        wireCursor    `json:"cursor"`
	LeafID        *string       `json:"leafId"`
	Previews      *wirePreviews `json:"previews,omitempty"`
}

type wireCursor struct {
	Before string  `json:"before,omitempty"`
	Since  *string `json:"since"`
}

type wireTrace struct {
	Version     int             `json:"version"`
	SessionID   string          `json:"sessionId"`
	Cwd         string          `json:"cwd"`
	Totals      wireTraceUsage  `json:"totals"`
	Turns       []wireTraceTurn `json:"turns"`
	Aux         []wireTraceAux  `json:"aux"`
	Partial     bool            `json:"partial"`
	SessionFile string          `json:"sessionFile,omitempty"`
}

type wireTraceUsage struct {
	Requests      int     `json:"requests"`
	Input         int     `json:"input"`
	Output        int     `json:"output"`
	CacheRead     int     `json:"cacheRead"`
	CacheWrite    int     `json:"cacheWrite"`
	ToolCalls     int     `json:"toolCalls"`
	Cost          float64 `json:"cost"`
	DurationMs    int64   `json:"durationMs"`
	CacheHitRatio float64 `json:"cacheHitRatio"`
}

type wireTraceTurn struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Status    string          `json:"status"`
	EntryIDs  []string        `json:"entryIds"`
	Steps     []wireTraceStep `json:"steps"`
	Usage     wireTraceUsage  `json:"usage"`
	StartedAt int64           `json:"startedAt,omitempty"`
	EndedAt   int64           `json:"endedAt,omitempty"`
}

type wireTraceStep struct {
	ID            string          `json:"id"`
	Kind          string          `json:"kind"`
	Status        string          `json:"status"`
	EntryIDs      []string        `json:"entryIds"`
	Provider      string          `json:"provider"`
	Model         string          `json:"model"`
	Attempt       int             `json:"attempt"`
	Usage         llm.Usage       `json:"usage"`
	StopReason    string          `json:"stopReason"`
	Tools         []wireTraceTool `json:"tools"`
	ThinkingLevel string          `json:"thinkingLevel,omitempty"`
	CacheHitRatio float64         `json:"cacheHitRatio"`
	RequestAt     int64           `json:"requestAt,omitempty"`
	FirstTokenAt  int64           `json:"firstTokenAt,omitempty"`
	DoneAt        int64           `json:"doneAt,omitempty"`
	TTFTMs        *int64          `json:"ttftMs,omitempty"`
	TPS           *float64        `json:"tps,omitempty"`
}

type wireTraceTool struct {
	ID       string          `json:"id"`
	Kind     string          `json:"kind"`
	Name     string          `json:"name"`
	Status   string          `json:"status"`
	IsError  bool            `json:"isError"`
	EntryIDs []string        `json:"entryIds"`
	Children []wireTraceTool `json:"children"`
	EndedAt  int64           `json:"endedAt,omitempty"`
}

type wireTraceAux struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Purpose  string    `json:"purpose"`
	Provider string    `json:"provider,omitempty"`
	Model    string    `json:"model,omitempty"`
	Usage    llm.Usage `json:"usage"`
	TurnID   string    `json:"turnId,omitempty"`
}

// wirePreviews is the previews object, keys in tree order.
type wirePreviews []trace.Preview

func (p wirePreviews) MarshalJSON() ([]byte, error) {
	out := []byte{'{'}
	for i, pv := range p {
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonstr.Append(out, pv.Key, jsonstr.Wire)
		out = append(out, ":{"...)
		n := 0
		for _, f := range []struct {
			name string
			v    *string
		}{{"input", pv.Input}, {"output", pv.Output}, {"args", pv.Args}, {"result", pv.Result}} {
			if f.v == nil {
				continue
			}
			if n > 0 {
				out = append(out, ',')
			}
			n++
			out = append(out, '"')
			out = append(out, f.name...)
			out = append(out, `":`...)
			out = jsonstr.Append(out, *f.v, jsonstr.Wire)
		}
		out = append(out, '}')
	}
	return append(out, '}'), nil
}

func toWireTraceUsage(u trace.Usage) wireTraceUsage {
	return wireTraceUsage{u.Requests, u.Input, u.Output, u.CacheRead, u.CacheWrite, u.ToolCalls, u.Cost,
		u.DurationMs, u.CacheHitRatio}
}

func toWireTools(tools []*trace.Tool) []wireTraceTool {
	out := make([]wireTraceTool, 0, len(tools))
	for _, t := range tools {
		out = append(out, wireTraceTool{ID: t.ID, Kind: "tool", Name: t.Name, Status: t.Status, IsError: t.IsError,
			EntryIDs: t.EntryIDs, Children: toWireTools(t.Children), EndedAt: t.EndedAt})
	}
	return out
}

func toWireTrace(r *trace.Result) wireTraceData {
	t := r.Trace
	w := wireTrace{Version: t.Version, SessionID: t.SessionID, Cwd: t.Cwd, Totals: toWireTraceUsage(t.Totals),
		Turns: make([]wireTraceTurn, 0, len(t.Turns)), Aux: make([]wireTraceAux, 0, len(t.Aux)),
		Partial: t.Partial, SessionFile: t.SessionFile}
	for _, turn := range t.Turns {
		wt := wireTraceTurn{ID: turn.ID, Kind: "turn", Status: turn.Status, EntryIDs: turn.EntryIDs,
			Steps: make([]wireTraceStep, 0, len(turn.Steps)), Usage: toWireTraceUsage(turn.Usage),
			StartedAt: turn.StartedAt, EndedAt: turn.EndedAt}
		for _, s := range turn.Steps {
			ws := wireTraceStep{ID: s.ID, Kind: "step", Status: s.Status, EntryIDs: s.EntryIDs, Provider: s.Provider,
				Model: s.Model, Attempt: s.Attempt, Usage: s.Usage, StopReason: s.StopReason, Tools: toWireTools(s.Tools),
				ThinkingLevel: s.ThinkingLevel, CacheHitRatio: s.CacheHitRatio,
				RequestAt: s.RequestAt, FirstTokenAt: s.FirstTokenAt, DoneAt: s.DoneAt, TTFTMs: s.TTFTMs, TPS: s.TPS}
			wt.Steps = append(wt.Steps, ws)
		}
		w.Turns = append(w.Turns, wt)
	}
	for _, a := range t.Aux {
		w.Aux = append(w.Aux, wireTraceAux{ID: a.ID, Kind: "aux", Purpose: a.Purpose, Provider: a.Provider,
			Model: a.Model, Usage: a.Usage, TurnID: a.TurnID})
	}
	out := wireTraceData{Trace: w, HasMoreBefore: r.HasMoreBefore,
		Cursor: wireCursor{Before: r.Cursor.Before, Since: r.Cursor.Since}, LeafID: r.LeafID}
	if r.Previews != nil {
		p := wirePreviews(r.Previews)
		out.Previews = &p
	}
	return out
}

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
	s.ok(c, toWireTrace(res))
}

package printmode

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/utf8cut"
	"github.com/armadra/ama-rpc/llm"
)

// Denial is one refused tool call in the result object.
type Denial struct {
	Tool       string `json:"tool"`
	ToolCallID string `json:"toolCallId"`
	Layer      string `json:"layer"`
	Code       string `json:"code"`
	Reason     string `json:"reason"`
}

// collector reads the session's events (the bus calls note under its
// lock, in publish order) and keeps what the result needs. Its state is
// guarded by mu; every change pokes the change channel, which Run waits on.
type collector struct {
	mu       sync.Mutex
	poke     chan struct{}
	active   bool // a run is between before_agent_start and its settle
	settles  int  // settled runs (OnSettle)
	last     *llm.AssistantMessage
	turns    int
	denials  []Denial
	limit    *events.LimitReached
	plan     *events.PlanProposed // pending (nil once resolved)
	running  map[string]bool      // tasks started and not ended
	bg       map[string]bool      // tasks that run in the background
	owed     int                  // notification turns still to come
	retries  []events.AutoRetryStart
	progress func(events.Event) // stderr lines (retry), outside mu
	// bash holds the command of each started bash call until it ends;
	// deniedBash the commands of the denied ones (the search hint).
	bash       map[string]string
	deniedBash []string
}

func newCollector() *collector {
	return &collector{poke: make(chan struct{}, 1), running: map[string]bool{}, bg: map[string]bool{}, bash: map[string]string{}}
}

func (c *collector) note(e events.Event) {
	switch e.(type) {
	case events.BeforeAgentStart, events.MessageStart, events.MessageEnd, events.ToolExecutionStart, events.ToolExecutionEnd,
		events.LimitReached, events.PlanProposed, events.PlanResolved, events.SubagentStart, events.SubagentBackground,
		events.SubagentEnd, events.AutoRetryStart:
	default:
		return // deltas and the rest
	}
	c.mu.Lock()
	switch e := e.(type) {
	case events.BeforeAgentStart:
		c.active = true
	case events.MessageStart:
		if u, ok := e.Message.(*llm.UserMessage); ok && u.Origin == llm.OriginTask && c.owed > 0 {
			c.owed--
		}
	case events.MessageEnd:
		if a, ok := e.Message.(*llm.AssistantMessage); ok {
			c.last = a
			if a.StopReason != llm.StopError && a.StopReason != llm.StopAborted {
				c.turns++
			}
		}
	case events.ToolExecutionStart:
		if e.ToolName == "bash" {
			var in struct {
				Command string `json:"command"`
			}
			if json.Unmarshal(e.Args, &in) == nil && in.Command != "" {
				c.bash[e.ToolCallID] = in.Command
			}
		}
	case events.ToolExecutionEnd:
		cmd, isBash := c.bash[e.ToolCallID]
		delete(c.bash, e.ToolCallID)
		if e.Denied && isBash {
			c.deniedBash = append(c.deniedBash, cmd)
		}
		if e.Denied {
			d := Denial{Tool: e.ToolName, ToolCallID: e.ToolCallID, Layer: "unknown", Code: events.DenialDenied, Reason: firstLine(e.Result.Content)}
			if e.Denial != nil {
				d.Layer, d.Code = e.Denial.Layer, e.Denial.Code
			}
			c.denials = append(c.denials, d)
		}
	case events.LimitReached:
		l := e
		c.limit = &l
	case events.PlanProposed:
		p := e
		c.plan = &p
	case events.PlanResolved:
		if c.plan != nil && c.plan.PlanID == e.PlanID {
			c.plan = nil
		}
	case events.SubagentStart:
		c.running[e.TaskID] = true
		c.bg[e.TaskID] = e.Background
	case events.SubagentBackground:
		c.bg[e.TaskID] = true
	case events.SubagentEnd:
		delete(c.running, e.TaskID)
		if c.bg[e.TaskID] && e.Status != "aborted" && e.Status != "stopped" && e.Status != "interrupted" {
			c.owed++ // agents notifies the parent of a finished background task
		}
	case events.AutoRetryStart:
		c.retries = append(c.retries, e)
	}
	c.mu.Unlock()
	if r, ok := e.(events.AutoRetryStart); ok && c.progress != nil {
		c.progress(r)
	}
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

// snapshot is a copy of what the collector knows.
type snapshot struct {
	active     bool
	settles    int
	last       *llm.AssistantMessage
	turns      int
	denials    []Denial
	limit      *events.LimitReached
	plan       *events.PlanProposed
	running    int
	owed       int
	deniedBash []string
}

func (c *collector) snap() snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return snapshot{active: c.active, settles: c.settles, last: c.last, turns: c.turns,
		denials: append([]Denial(nil), c.denials...), limit: c.limit, plan: c.plan, running: len(c.running), owed: c.owed,
		deniedBash: append([]string(nil), c.deniedBash...)}
}

// firstLine is a denied call's reason: the first line of its result text,
// trimmed, at most 200 bytes.
func firstLine(content []llm.Content) string {
	for _, b := range content {
		if t, ok := b.(*llm.TextContent); ok {
			line, _, _ := strings.Cut(strings.TrimSpace(t.Text), "\n")
			return utf8cut.Head(strings.TrimSpace(line), 200)
		}
	}
	return ""
}

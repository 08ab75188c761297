package session

import (
	"testing"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
)

func TestOutcomeOfARun(t *testing.T) {
	s := &Session{}
	var got []Outcome
	unsub := s.OnSettle(func(o Outcome) { got = append(got, o) })
	msg := func(stop, errMsg string, in int) events.Event {
		return events.MessageEnd{Message: &llm.AssistantMessage{StopReason: stop, ErrorMessage: errMsg, Usage: llm.Usage{Input: in, Output: 1}}}
	}
	note := s.outcomes.note
	// Outside a run nothing counts.
	note(msg(llm.StopStop, "", 100))
	note(events.PlanProposed{PlanID: "stale"})
	// A run: two turns, a limit, a plan, the last agent_end decides.
	note(events.BeforeAgentStart{})
	note(events.AgentStart{})
	note(msg(llm.StopToolUse, "", 1))
	note(events.LimitReached{Kind: events.LimitTurns})
	note(msg(llm.StopStop, "", 2))
	note(events.PlanProposed{PlanID: "p1"})
	note(events.AgentEnd{StopReason: llm.StopLength})
	note(events.AgentSettled{Warning: "limit_reached"})
	s.outcomes.settled("limit_reached")
	// Another run without agent_end: its last message decides.
	note(events.BeforeAgentStart{})
	note(msg(llm.StopError, "boom", 5))
	s.outcomes.settled("")
	unsub()
	note(events.BeforeAgentStart{})
	s.outcomes.settled("")

	if len(got) != 2 {
		t.Fatalf("%d outcomes, want 2", len(got))
	}
	o := got[0]
	if o.StopReason != llm.StopLength || o.Usage.Input != 3 || o.Usage.Output != 2 || o.Limit != events.LimitTurns ||
		o.Plan == nil || o.Plan.PlanID != "p1" || o.Warning != "limit_reached" || o.ErrorMessage != "" {
		t.Errorf("first run: %+v", o)
	}
	o = got[1]
	if o.StopReason != llm.StopError || o.ErrorMessage != "boom" || o.Usage.Input != 5 || o.Limit != "" || o.Plan != nil || o.Warning != "" {
		t.Errorf("second run: %+v", o)
	}
}

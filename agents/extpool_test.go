package agents

import (
	"testing"
	"time"

	"github.com/armadra/ama-rpc/events"
)

// nextWaiting is the next task reported waiting for an external slot.
func nextWaiting(t *testing.T, waiting chan string) string {
	t.Helper()
	select {
	case id := <-waiting:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("no run waited for an external slot")
		return ""
	}
}

func startsOf(rec string) int {
	if readRec(rec, "starts") == "" {
		return 0
	}
	return len(recLines(rec, "starts"))
}

func waitStarts(t *testing.T, r *rig, n int) {
	t.Helper()
	r.rec.waitFor(t, "subagent_start events", func(evs []events.Event) bool {
		k := 0
		for _, e := range evs {
			if _, ok := e.(events.SubagentStart); ok {
				k++
			}
		}
		return k >= n
	})
}

// A third claude run waits for one of the two running ones (claude's own
// limit is 2): its CLI is not started until a slot is free.
func TestExternalClaudeLimitWaits(t *testing.T) {
	rec := installFakeCLI(t, "claude", "claude", "hang")
	r := externalRig(t, AgentClaude, false)
	waiting := make(chan string, 8)
	r.reg.cfg.extWaiting = func(id string) { waiting <- id }
	var tasks []*Task
	for range 3 {
		task, err := r.reg.Launch(Request{Prompt: "x", Agent: AgentClaude, Background: new(bool)})
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, task)
	}
	waitStarts(t, r, 2)
	queued := nextWaiting(t, waiting)
	if n := startsOf(rec); n != 2 {
		t.Fatalf("%d CLI processes started, want 2 (limit)", n)
	}
	for _, task := range tasks {
		if task.ID() == queued {
			continue
		}
		task.Abort()
		<-task.done
		break
	}
	waitStarts(t, r, 3)
	if n := startsOf(rec); n != 3 {
		t.Fatalf("%d CLI processes started after a slot was freed, want 3", n)
	}
	for _, task := range tasks {
		task.Abort()
		<-task.done
	}
	if len(waiting) != 0 {
		t.Fatalf("more runs waited than expected: %d", len(waiting))
	}
}

// agents.maxConcurrent bounds every external agent; a run aborted while it
// waits ends aborted and its CLI never starts.
func TestExternalTotalLimitAbortWhileWaiting(t *testing.T) {
	rec := installFakeCLI(t, "claude", "claude", "hang")
	r := externalRig(t, AgentClaude, false)
	r.reg.cfg.ExternalMaxConcurrent = 1
	waiting := make(chan string, 8)
	r.reg.cfg.extWaiting = func(id string) { waiting <- id }
	first, err := r.reg.Launch(Request{Prompt: "x", Agent: AgentClaude, Background: new(bool)})
	if err != nil {
		t.Fatal(err)
	}
	waitStarts(t, r, 1)
	second, err := r.reg.Launch(Request{Prompt: "x", Agent: AgentClaude, Background: new(bool)})
	if err != nil {
		t.Fatal(err)
	}
	if id := nextWaiting(t, waiting); id != second.ID() {
		t.Fatalf("waiting %s, want %s", id, second.ID())
	}
	second.Abort()
	<-second.done
	if res := second.Result(); res.Status != StatusAborted {
		t.Fatalf("waiting run ended %+v", res)
	}
	first.Abort()
	<-first.done
	if n := startsOf(rec); n != 1 {
		t.Fatalf("%d CLI processes started, want 1", n)
	}
}

// The limits come from the config: agents.<id>.maxConcurrent, claude's
// default of 2, the total of 3.
func TestExternalLimits(t *testing.T) {
	c := Config{External: map[string]ExternalSettings{AgentCodex: {MaxConcurrent: 1}}}
	if max, own := c.externalLimits(AgentClaude); max != 3 || own != 2 {
		t.Fatalf("claude %d %d", max, own)
	}
	if max, own := c.externalLimits(AgentCodex); max != 3 || own != 1 {
		t.Fatalf("codex %d %d", max, own)
	}
	c.ExternalMaxConcurrent = 5
	if max, own := c.externalLimits("acp:x"); max != 5 || own != 0 {
		t.Fatalf("acp %d %d", max, own)
	}
}

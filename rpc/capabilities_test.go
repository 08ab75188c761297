package rpc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/stdio"
)

// The one predicate: an event behind a capability reaches only a client
// that declared it; every other event reaches every client.
func TestCapabilityGate(t *testing.T) {
	decision := events.PermissionDecision{Record: map[string]any{"effect": "allow"}}
	for _, tc := range []struct {
		name     string
		e        events.Event
		declared capSet
		hidden   bool
	}{
		{"decision, nothing declared (print mode)", decision, nil, true},
		{"decision, other capabilities", decision, capSet{"approvals": true, "compact_events": true}, true},
		{"decision, declared", decision, capSet{capPermissionDecisions: true}, false},
		{"decision, declared then withdrawn", decision, capSet{capPermissionDecisions: false}, true},
		{"ungated event, nothing declared", events.AgentSettled{}, nil, false},
		{"ungated event, declared", events.Notification{Level: "info", Message: "m"}, capSet{capPermissionDecisions: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.declared.hides(tc.e); got != tc.hidden {
				t.Fatalf("hides = %v, want %v", got, tc.hidden)
			}
		})
	}
}

// Print mode's sink declares nothing: a gated event never reaches its
// output, an ungated one does.
func TestEventSinkHidesGatedEvents(t *testing.T) {
	var out bytes.Buffer
	w := EventWriter(&out, stdio.WriterOptions{})
	sink := EventSink(w, nil)
	sink(events.PermissionDecision{Record: map[string]any{"effect": "deny"}})
	sink(events.AgentSettled{})
	w.Close()
	got := out.String()
	if strings.Contains(got, "permission_decision") || !strings.Contains(got, `"agent_settled"`) {
		t.Fatalf("stream-json output:\n%s", got)
	}
}

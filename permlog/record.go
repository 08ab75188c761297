package permlog

import (
	"strconv"
	"strings"
)

// Version is the record format ("v").
const Version = 1

// Record is one permission decision. Its JSON form is the decision log's
// line and the permission_decision event's "record".
type Record struct {
	V    int    `json:"v"`
	Time string `json:"time"`
	// Ids: the session that judged the call, its turn in the current run,
	// the call, the calling call of a nested call, the task of a
	// sub-agent's session and the nesting depth (1: a sub-agent).
	SessionID        string `json:"sessionId"`
	Turn             int    `json:"turn,omitempty"` // 1: the run's first turn
	ToolCallID       string `json:"toolCallId"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
	TaskID           string `json:"taskId,omitempty"`
	Depth            int    `json:"depth,omitempty"`
	// Mode is the permission mode the call was judged with; Gate is the
	// gate mode (off, shadow, enforce).
	Mode string `json:"mode"`
	Gate string `json:"gate"`
	// Unattended: nobody could be asked (a final ask became a deny), so
	// a replay judges the call as the session did.
	Unattended bool   `json:"unattended,omitempty"`
	Shape      Shape  `json:"shape"`
	Votes      []Vote `json:"votes"`
	// Effect is what happened: allow or deny.
	Effect string `json:"effect"`
	// Code is the stable code of a deny; Asked the code of the ask that
	// went to a person (or would have, see the log vote).
	Code  string `json:"code,omitempty"`
	Asked string `json:"asked,omitempty"`
	// Rejections counts the rejections of this action in the session,
	// this one included (0 for an allow).
	Rejections int `json:"rejections,omitempty"`
	// Shadow is what the candidate policy would have decided (gate
	// shadow), or what the policy it replaced would have (gate enforce
	// with a candidate).
	Shadow *Shadow `json:"shadow,omitempty"`
}

// Shape is what the interpretation of a call looks like, without its
// content.
type Shape struct {
	Tool  string `json:"tool"`
	Class string `json:"class,omitempty"`
	// Programs are the command names of every simple command, nested
	// layers included, in order, without repeats ("other" for a name that
	// does not look like a program name).
	Programs []string `json:"programs,omitempty"`
	// Paths are the classes of the paths the call names (PathClass).
	Paths []string `json:"paths,omitempty"`
	// Layers is the deepest nested shell layer; Subst, Compound and
	// Unparsed report substitutions, compound commands and a command
	// that could not be analysed.
	Layers   int  `json:"layers,omitempty"`
	Subst    bool `json:"subst,omitempty"`
	Compound bool `json:"compound,omitempty"`
	Unparsed bool `json:"unparsed,omitempty"`
}

// Vote is one layer's say on a call.
type Vote struct {
	// Layer: hook, rule (the approvals pipeline), sandbox, classifier,
	// person, log, agent (a read-only sub-agent), gate (the mode tightened
	// while a batch ran).
	Layer string `json:"layer"`
	// Vote: allow, ask or deny.
	Vote string `json:"vote"`
	// Step is the approvals step that decided (deny-rule, ask-rule,
	// dangerous, auto-rule, allow-rule, session, mode, plan, allowlist,
	// static, classifier, input, safety, sandbox, error).
	Step string `json:"step,omitempty"`
	// Rule is the id of the rule that matched: "deny:N", "ask:N",
	// "allow:N" (index into the effective list, see diagnostics).
	Rule string `json:"rule,omitempty"`
	// Categories are dangerous-list (and hard-deny) category ids.
	Categories []string `json:"categories,omitempty"`
	// Classifier: stage (single, fast, detailed), latency, cache hit,
	// failure (no valid answer).
	Stage     string `json:"stage,omitempty"`
	LatencyMs int64  `json:"latencyMs,omitempty"`
	Cached    bool   `json:"cached,omitempty"`
	Failed    bool   `json:"failed,omitempty"`
	// Person: the answer (allow, allow_session, deny, none) and the wait.
	Answer string `json:"answer,omitempty"`
	WaitMs int64  `json:"waitMs,omitempty"`
}

// Shadow is the other policy's verdict on the same call.
type Shadow struct {
	Policy string `json:"policy"` // candidate, or current (under gate enforce)
	// Effect: allow, ask or deny (nobody is asked for it).
	Effect string `json:"effect"`
	Code   string `json:"code,omitempty"`
	Step   string `json:"step,omitempty"`
	Rule   string `json:"rule,omitempty"`
	// Differs is set when the effect differs from what the deciding
	// policy's pipeline said before a person or the classifier answered.
	Differs bool `json:"differs,omitempty"`
}

// RuleID names the index-th rule of a kind (deny, ask, allow).
func RuleID(kind string, index int) string {
	if index < 0 {
		return ""
	}
	return kind + ":" + strconv.Itoa(index)
}

// Program returns name when it looks like a program name (lower-case
// letters, digits and . _ + -, at most 32 bytes, with fewer than 6 digits
// and no run of 12 hex-or-digit characters, so a token used as a command
// word is not copied), else "other"; "" stays "".
func Program(name string) string {
	if name == "" {
		return ""
	}
	if len(name) > 32 {
		return "other"
	}
	digits, run := 0, 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			run++
		case c >= 'a' && c <= 'f':
			run++
		case c >= 'g' && c <= 'z', c == '.', c == '_', c == '+', c == '-':
			run = 0
		default:
			return "other"
		}
		if run >= 12 {
			return "other"
		}
	}
	if digits >= 6 || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "-") {
		return "other"
	}
	return name
}

// AddUnique appends s to list unless it is empty or already there.
func AddUnique(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

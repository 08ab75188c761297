package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

var errEOF = io.EOF

// Output is the parsed stdout JSON of an exit-0 hook (spec §4.2).
type Output struct {
	Decision           Decision
	Reason             string
	HasUpdatedInput    bool
	UpdatedInput       json.RawMessage
	UpdatedPrompt      *string
	AdditionalContext  string
	CustomInstructions string
	Stop               bool
	SuppressOutput     bool
	Warnings           []string
}

// ParseOutput parses stdout: trimmed, it must start with { (or [, which
// then is not an object); anything unparsable is no output (nil).
func ParseOutput(stdout string) *Output {
	s := strings.TrimSpace(stdout)
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return nil
	}
	var obj map[string]json.RawMessage
	if s[0] != '{' || json.Unmarshal([]byte(s), &obj) != nil {
		return nil
	}
	o := &Output{}
	str := func(key string) (string, bool) {
		raw, ok := obj[key]
		if !ok {
			return "", false
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			o.Warnings = append(o.Warnings, fmt.Sprintf("hook output field %s must be a string; ignored", key))
			return "", false
		}
		return v, true
	}
	if d, ok := str("decision"); ok {
		switch Decision(d) {
		case Allow, Deny, Ask, Block:
			o.Decision = Decision(d)
		default:
			o.Warnings = append(o.Warnings, fmt.Sprintf("hook decision %q is not allow, deny, ask or block; ignored", d))
		}
	}
	o.Reason, _ = str("reason")
	if raw, ok := obj["updatedInput"]; ok {
		o.HasUpdatedInput, o.UpdatedInput = true, raw
	}
	if p, ok := str("updatedPrompt"); ok {
		o.UpdatedPrompt = &p
	}
	o.AdditionalContext, _ = str("additionalContext")
	o.CustomInstructions, _ = str("customInstructions")
	if raw, ok := obj["continue"]; ok && string(bytes.TrimSpace(raw)) == "false" {
		o.Stop = true
	}
	if raw, ok := obj["suppressOutput"]; ok && string(bytes.TrimSpace(raw)) == "true" {
		o.SuppressOutput = true
	}
	return o
}

// Outcome is the interpretation of one finished hook.
type Outcome struct {
	Command  *Command
	ExitCode *int
	TimedOut bool
	Duration time.Duration
	// Output holds the fields an exit-0 hook contributes (nil otherwise);
	// Output.Decision is already mapped to what the event accepts.
	Output *Output
	// Decision is the hook's effective decision ("" none).
	Decision Decision
	Reason   string
	Warnings []string
}

// Interpret applies the exit code rules of spec §4.1 to one process.
func Interpret(e Event, c *Command, p Proc, timeout time.Duration) Outcome {
	o := Outcome{Command: c, ExitCode: p.ExitCode, TimedOut: p.TimedOut, Duration: p.Duration}
	switch {
	case p.TimedOut:
		msg := fmt.Sprintf("%s hook timed out after %d ms: %s", e, timeout.Milliseconds(), c.Command)
		if e == PreToolUse {
			o.Decision, o.Reason = Deny, msg
		}
		o.Warnings = append(o.Warnings, msg)
	case p.ExitCode == nil:
		o.Warnings = append(o.Warnings, fmt.Sprintf("%s hook was killed: %s%s", e, c.Command, lastLines(p.Stderr)))
	case *p.ExitCode == 0:
		out := ParseOutput(p.Stdout)
		if out == nil {
			break
		}
		o.Warnings = append(o.Warnings, out.Warnings...)
		if out.Decision != "" {
			d := accepted(e, out.Decision)
			if d == "" {
				o.Warnings = append(o.Warnings, fmt.Sprintf("%s hook decision %q is not accepted for this event; ignored", e, out.Decision))
			}
			out.Decision = d
		}
		o.Output, o.Decision, o.Reason = out, out.Decision, out.Reason
	case *p.ExitCode == 2:
		if d := blocking(e); d != "" {
			o.Decision = d
			o.Reason = strings.TrimSpace(p.Stderr)
			if o.Reason == "" {
				o.Reason = fmt.Sprintf("blocked by %s hook: %s", e, c.Command)
			}
		}
	default:
		o.Warnings = append(o.Warnings, fmt.Sprintf("%s hook failed (exit %d): %s%s", e, *p.ExitCode, c.Command, lastLines(p.Stderr)))
	}
	return o
}

// lastLines is " — " plus the last 3 non-empty stderr lines joined by " | ".
func lastLines(stderr string) string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return ": " + strings.Join(lines, " | ")
}

// Result is the merged result of one event's hooks (spec §4.3): the
// fields of one hook's Output, merged, plus the hooks that ran.
type Result struct {
	Output
	// Outcomes are the hooks that ran, in configuration order.
	Outcomes []Outcome
}

// Merge combines outcomes given in configuration order.
func Merge(outs []Outcome) *Result {
	r := &Result{Outcomes: outs}
	var inputs, prompts []*Output
	var contexts, instructions []string
	stopReason := ""
	for i := range outs {
		o := &outs[i]
		r.Warnings = append(r.Warnings, o.Warnings...)
		if sv := severity(o.Decision); sv > severity(r.Decision) {
			r.Decision, r.Reason = o.Decision, o.Reason
		} else if sv > 0 && sv == severity(r.Decision) && r.Reason == "" {
			r.Reason = o.Reason
		}
		out := o.Output
		if out == nil {
			continue
		}
		if out.HasUpdatedInput {
			inputs = append(inputs, out)
		}
		if out.UpdatedPrompt != nil {
			prompts = append(prompts, out)
		}
		if s := strings.TrimSpace(out.AdditionalContext); s != "" {
			contexts = append(contexts, s)
		}
		if s := strings.TrimSpace(out.CustomInstructions); s != "" {
			instructions = append(instructions, s)
		}
		if out.Stop {
			if !r.Stop {
				stopReason = out.Reason
			}
			r.Stop = true
		}
		r.SuppressOutput = r.SuppressOutput || out.SuppressOutput
	}
	if r.Stop && r.Reason == "" {
		r.Reason = stopReason
	}
	switch {
	case len(inputs) == 1:
		r.HasUpdatedInput, r.UpdatedInput = true, inputs[0].UpdatedInput
	case len(inputs) > 1:
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d hooks returned updatedInput; all are ignored", len(inputs)))
	}
	switch {
	case len(prompts) == 1:
		r.UpdatedPrompt = prompts[0].UpdatedPrompt
	case len(prompts) > 1:
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d hooks returned updatedPrompt; all are ignored", len(prompts)))
	}
	r.AdditionalContext = strings.Join(contexts, "\n\n")
	r.CustomInstructions = strings.Join(instructions, "\n\n")
	return r
}

// Blocked reports a block or deny decision.
func (r *Result) Blocked() bool {
	return r != nil && (r.Decision == Block || r.Decision == Deny)
}

package approvals

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// Policy is the effective permission configuration of a session.
type Policy struct {
	Mode       Mode
	Allow      []Rule // effective allow rules (user and command-line layers)
	Deny       []Rule // effective deny rules, built-ins included unless disabled
	Ask        []Rule // effective ask rules (every layer; deny > ask > allow)
	Unattended bool   // nobody can answer: a final ask becomes deny
	PlanBash   string // plan.bash: "readonly" (default), "ask", "deny"
	// ClassifyReads sends auto mode's read-class calls to the classifier
	// instead of the static allow (seed 003 classifyReadOnlyTools).
	ClassifyReads bool
	AutoSafe      []string // user-level autoSafeCommands additions
	Sandbox       Sandbox  // the OS sandbox of bash (sandbox.go)
	// Safety are this process's safety files (safety.go): writes to them
	// are denied in every mode.
	Safety Safety
	// Private are ama's own private places (secrets.PrivateDirs: other
	// sessions, checkpoints, the API key at a configured data directory),
	// judged like the credential stores of internal/secrets.
	Private []string
}

// AutoDecision records how auto mode decided (for audits and the wire).
type AutoDecision struct {
	Layer    string `json:"layer"` // rule, static, classifier
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Cached   bool   `json:"cached,omitempty"`
}

// Verdict is the outcome of Decide.
type Verdict struct {
	Decision Decision
	// Layer names the step that decided: deny-rule, dangerous, auto-rule,
	// allow-rule, session, mode, plan, allowlist, static, classifier, input,
	// error.
	Layer string
	// Reason is one English line. On deny it is shown to the model as the
	// tool error; on ask it explains why approval is needed.
	Reason string
	// AskReason is the permission_request reason: "dangerous" when the
	// dangerous list asked, otherwise "mode".
	AskReason string
	// Dangerous lists the ids of the dangerous-list entries that matched.
	Dangerous []string
	// Classify is set in auto mode when the call is still undecided after the
	// rule and static tiers: the caller may ask the model classifier, apply
	// WithClassifier and then Finalize.
	Classify bool
	// Auto is set in auto mode.
	Auto *AutoDecision
	// Sandboxed is set when the sandbox free pass allowed the call.
	Sandboxed bool
	// Rule names the permission rule that decided: "deny:N", "ask:N" or
	// "allow:N", N its index in the Policy's list (the decision record
	// carries the id, never the rule text).
	Rule string
	// Unattended is set when Finalize turned an ask into this deny.
	Unattended bool
	// AskRule is the id ("ask:N") of the permission.ask rule that matched:
	// the call is asked whatever the allow tiers say; in auto mode the
	// classifier still reviews it after the person accepts (seed 003).
	AskRule string
}

// ruleID names rules[i] of the given kind.
func ruleID(kind string, rules []Rule, r *Rule) string {
	for i := range rules {
		if &rules[i] == r {
			return kind + ":" + strconv.Itoa(i)
		}
	}
	return ""
}

// Texts shown to the model or the user.
const (
	planModeText = "Plan mode is on, so tools that change files or run commands are not available. " +
		"Keep investigating with read-only tools, then end your reply with the plan in a <proposed_plan> block."
	planTodoText = "Plan mode is on: the todo list is created from the plan once it is approved. " +
		"Only todo get works now; write the steps into your <proposed_plan> block instead."
	allowlistText = "Not in the allowlist: permission mode \"allowlist\" only runs read-only tools, read-only " +
		"commands and calls matched by an allow rule, and it never asks."
	unattendedText = "This call needs approval, but nobody is available to give it (unattended), so it was refused"
)

// Decide runs the permission pipeline for one call. mem may be nil. With
// pol.Unattended a remaining ask becomes deny, except in auto mode when the
// verdict asks for the classifier (Classify): then the caller consults the
// classifier, applies WithClassifier, and calls Finalize. Decide never
// panics; internal failures ask (deny where nobody can be asked).
func Decide(call Call, pol *Policy, mem *Memory) (v Verdict) {
	if pol == nil {
		pol = &Policy{Mode: ModeDefault}
	}
	defer func() {
		if r := recover(); r != nil {
			v = Finalize(failClosed(pol, "error", fmt.Sprintf("internal error in the permission check (%v); refusing to decide automatically", r)), pol)
		}
	}()
	mode := pol.Mode
	if !mode.Valid() {
		mode = ModeDefault
	}
	c := newCallCtx(call)
	v = decide(c, pol, mode, mem)
	if mode == ModeAuto && v.Auto == nil {
		v.Auto = &AutoDecision{Layer: "rule", Decision: string(v.Decision), Reason: v.Reason}
	}
	if v.Classify {
		return v
	}
	return Finalize(v, pol)
}

// Finalize turns a remaining ask into deny when nobody can answer.
func Finalize(v Verdict, pol *Policy) Verdict {
	if pol != nil && pol.Unattended && v.Decision == Ask {
		v.Decision = Deny
		v.Classify = false
		v.Unattended = true
		v.Reason = unattendedText + ": " + v.Reason
	}
	return v
}

// WithClassifier folds the model classifier's answer into a verdict that
// asked for it. Only "allow" changes the decision; anything else keeps the
// ask (which Finalize turns into deny when unattended). Verdicts that did
// not ask for the classifier are returned unchanged.
func (v Verdict) WithClassifier(allow bool, reason string, cached bool) Verdict {
	if !v.Classify {
		return v
	}
	v.Classify = false
	reason = collapseSpace(reason)
	if allow {
		v.Decision, v.Layer = Allow, "classifier"
		v.Reason = "Allowed by the auto-mode classifier: " + reason
		v.Auto = &AutoDecision{Layer: "classifier", Decision: string(Allow), Reason: reason, Cached: cached}
		return v
	}
	v.Decision = Ask
	v.Reason = "The auto-mode classifier wants a person to decide: " + reason
	v.Auto = &AutoDecision{Layer: "classifier", Decision: string(Ask), Reason: reason, Cached: cached}
	return v
}

func failClosed(pol *Policy, layer, reason string) Verdict {
	v := Verdict{Decision: Ask, Layer: layer, Reason: reason, AskReason: "mode"}
	if pol.Mode == ModeAllowlist {
		v.Decision = Deny
	}
	return v
}

func decide(c *callCtx, pol *Policy, mode Mode, mem *Memory) Verdict {
	// 1. Deny rules (built-in and configured), for bash on every layer.
	for i := range pol.Deny {
		r := &pol.Deny[i]
		if r.denyMatch(c) {
			reason := "Denied by permission rule " + r.String()
			if r.err != nil {
				reason += " (the rule is malformed, so it is applied to every call it might mean)"
			} else if c.isBash && c.bash != nil && c.bash.Err != nil {
				reason += " (the command could not be analysed, so the rule is applied conservatively)"
			}
			return Verdict{Decision: Deny, Layer: "deny-rule", Reason: reason + ".", Rule: "deny:" + strconv.Itoa(i)}
		}
	}
	// 1b. ama's own safety files: no write, whatever the tool and mode.
	if v := safetyWrite(c, pol); v != nil {
		return *v
	}
	// Input that cannot be judged fails closed.
	if c.invalid != "" {
		v := failClosed(pol, "input", "Cannot check this call: "+c.invalid+".")
		if c.isBash {
			v.AskReason, v.Dangerous = "dangerous", []string{DangerUnparsable}
		}
		return v
	}
	// 1c. Ask rules: a person decides; no allow tier lifts the call, the
	// deterministic denials below still apply (askRuled).
	for i := range pol.Ask {
		if pol.Ask[i].denyMatch(c) {
			return askRuled(c, pol, mode, mem, &pol.Ask[i], "ask:"+strconv.Itoa(i))
		}
	}
	return decideRest(c, pol, mode, mem)
}

// askRuled decides a call an ask rule matched: the rest of the pipeline
// without its allow tiers, then an ask unless that denies (allowlist mode
// never asks: there the rule denies).
func askRuled(c *callCtx, pol *Policy, mode Mode, mem *Memory, r *Rule, id string) Verdict {
	c.noAllow = true
	v := decideRest(c, pol, mode, mem)
	v.AskRule = id
	if v.Decision == Deny {
		return v
	}
	reason := "Asks by permission rule " + r.String()
	if r.err != nil {
		reason += " (the rule is malformed, so it is applied to every call it might mean)"
	}
	if mode == ModeAllowlist {
		return Verdict{Decision: Deny, Layer: "ask-rule", Reason: allowlistText + " " + reason + ".", Rule: id, AskRule: id}
	}
	if v.Decision == Allow {
		v = Verdict{Decision: Ask, Layer: "ask-rule", AskReason: "mode", Reason: reason + ".", Rule: id, AskRule: id}
		if mode == ModeAuto {
			v.Auto = &AutoDecision{Layer: "rule", Decision: string(Ask), Reason: reason}
		}
	}
	switch v.Layer {
	case "mode", "plan", "classifier", "sandbox":
		v.Layer = "ask-rule" // the rule is why a person is asked
	}
	if v.Rule == "" {
		v.Rule = id
	}
	return v
}

// decideRest is the pipeline after the rules: the dangerous list, then the
// mode's own steps.
func decideRest(c *callCtx, pol *Policy, mode Mode, mem *Memory) Verdict {
	// 2. The dangerous list (bash): ask, deny in allowlist; nothing lifts it.
	if c.isBash && c.bash != nil {
		if d := c.bash.Danger(); len(d) > 0 {
			return dangerVerdict(d, mode)
		}
	}
	// 3. Mode-specific handling.
	switch mode {
	case ModeAuto:
		return decideAuto(c, pol, mem)
	case ModeAllowlist:
		return decideAllowlist(c, pol)
	}
	return decideMode(c, pol, mode, mem)
}

func dangerVerdict(d []DangerMatch, mode Mode) Verdict {
	ids := make([]string, len(d))
	reasons := make([]string, len(d))
	for i, m := range d {
		ids[i], reasons[i] = m.ID, m.Reason
	}
	v := Verdict{
		Decision: Ask, Layer: "dangerous", AskReason: "dangerous", Dangerous: ids,
		Reason: "Potentially dangerous command: " + strings.Join(reasons, "; ") + ".",
	}
	if mode == ModeAuto {
		v.Auto = &AutoDecision{Layer: "rule", Decision: string(Ask), Reason: strings.Join(reasons, "; ")}
	}
	if mode == ModeAllowlist {
		v.Decision = Deny
		v.Reason = allowlistText + " " + v.Reason
	}
	return v
}

// modeStep is the truth table of section 1.2 (before allow rules).
func modeStep(mode Mode, class Class) Decision {
	switch {
	case class == ClassRead || mode == ModeFullAuto:
		return Allow
	case mode == ModePlan || mode == ModeAllowlist:
		return Deny
	case mode == ModeAutoEdit && class == ClassWrite:
		return Allow
	}
	return Ask
}

// planStep refines the truth table for plan mode by looking at the input.
func planStep(c *callCtx, pol *Policy) (Decision, string) {
	switch {
	case c.tool == "todo" && !c.isMemory:
		if c.action == "get" {
			return Allow, "todo get is allowed in plan mode"
		}
		return Deny, planTodoText
	case c.class == ClassRead:
		return Allow, "read-only tools are allowed in plan mode"
	case c.tool == "task":
		return Allow, "sub-agents run under the same plan-mode rules"
	case c.isBash:
		readOnly := c.bash != nil && c.bash.readOnlyIn(pol.Private)
		switch pol.PlanBash {
		case PlanBashDeny:
			return Deny, planModeText
		case PlanBashAsk:
			if readOnly {
				return Allow, "read-only command"
			}
			return Ask, "plan mode asks before commands that are not read-only"
		}
		if readOnly {
			return Allow, "read-only command"
		}
	}
	return Deny, planModeText
}

// decideMode handles plan, default, auto-edit and full-auto.
func decideMode(c *callCtx, pol *Policy, mode Mode, mem *Memory) Verdict {
	layer := "mode"
	var d Decision
	var why string
	if mode == ModePlan {
		layer = "plan"
		d, why = planStep(c, pol)
	} else {
		d = modeStep(mode, c.class)
		why = fmt.Sprintf("mode %s %s %s tools", mode, verb(d), c.class)
	}
	switch d {
	case Deny:
		return Verdict{Decision: Deny, Layer: layer, Reason: why}
	case Allow:
		return Verdict{Decision: Allow, Layer: layer, Reason: why}
	}
	if v, ok := lifted(c, pol, mem); ok {
		return v
	}
	if v, ok := sandboxPass(c, pol, mode); ok {
		return v
	}
	return Verdict{Decision: Ask, Layer: layer, AskReason: "mode", Reason: capitalize(why) + "."}
}

func verb(d Decision) string {
	switch d {
	case Allow:
		return "allows"
	case Deny:
		return "refuses"
	}
	return "asks before"
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// lifted applies allow rules and session memory to an ask.
func lifted(c *callCtx, pol *Policy, mem *Memory) (Verdict, bool) {
	if c.noAllow {
		return Verdict{}, false
	}
	if r, ok := allowedByRule(c, pol); ok {
		return Verdict{Decision: Allow, Layer: "allow-rule", Reason: "Allowed by permission rule " + r.String() + ".", Rule: ruleID("allow", pol.Allow, r)}, true
	}
	if mem.covers(c) {
		return Verdict{Decision: Allow, Layer: "session", Reason: "Allowed for this session."}, true
	}
	return Verdict{}, false
}

// allowedByRule reports an allow rule covering the call (for bash: every
// layer).
func allowedByRule(c *callCtx, pol *Policy) (*Rule, bool) {
	if c.isBash && !c.bgQuery {
		return bashCovered(pol.Allow, c.bash)
	}
	for i := range pol.Allow {
		if pol.Allow[i].allowMatch(c) {
			return &pol.Allow[i], true
		}
	}
	return nil, false
}

// decideAllowlist: read tools, task and read-only commands run; otherwise an
// allow rule must cover the call; everything else is refused, never asked.
func decideAllowlist(c *callCtx, pol *Policy) Verdict {
	switch {
	case c.class == ClassRead:
		return Verdict{Decision: Allow, Layer: "allowlist", Reason: "read-only tools are allowed"}
	case c.tool == "task":
		return Verdict{Decision: Allow, Layer: "allowlist", Reason: "sub-agents share this permission pipeline"}
	case c.isBash && c.bash != nil && c.bash.readOnlyIn(pol.Private):
		return Verdict{Decision: Allow, Layer: "allowlist", Reason: "read-only command"}
	}
	if r, ok := allowedByRule(c, pol); ok {
		return Verdict{Decision: Allow, Layer: "allow-rule", Reason: "Allowed by permission rule " + r.String() + ".", Rule: ruleID("allow", pol.Allow, r)}
	}
	return Verdict{Decision: Deny, Layer: "allowlist", Reason: allowlistText}
}

// decideAuto runs auto mode's tiers: rules (no model), allow rules and
// session memory, static judgement, then the classifier.
func decideAuto(c *callCtx, pol *Policy, mem *Memory) Verdict {
	if r := autoRuleReason(c, pol); r != "" {
		return Verdict{
			Decision: Ask, Layer: "auto-rule", AskReason: "mode",
			Reason: "Auto mode asks before this: " + r + ".",
			Auto:   &AutoDecision{Layer: "rule", Decision: string(Ask), Reason: r},
		}
	}
	if v, ok := lifted(c, pol, mem); ok {
		v.Auto = &AutoDecision{Layer: "rule", Decision: string(Allow), Reason: v.Reason}
		return v
	}
	if v, ok := sandboxLeave(c, pol); ok {
		return v
	}
	static := func(reason string) Verdict {
		return Verdict{Decision: Allow, Layer: "static", Reason: "Auto mode: " + reason + ".",
			Auto: &AutoDecision{Layer: "static", Decision: string(Allow), Reason: reason}}
	}
	switch {
	case c.noAllow: // an ask rule: the classifier reviews after the person
	case c.class == ClassRead && !pol.ClassifyReads:
		return static("read-only tool")
	case c.isBash && c.bash != nil && c.bash.staticSafe(pol.AutoSafe, false) == "":
		return static("every command is on the safe list")
	case c.class == ClassWrite && c.hasPath && !c.isMemory:
		return static("writes inside the project")
	}
	why := "not decided by rules or the safe list"
	if c.class == ClassRead && pol.ClassifyReads && !c.noAllow {
		why = "classifyReadOnlyTools: reads are reviewed too"
	}
	if c.isBash && c.bash != nil {
		why = c.bash.staticSafe(pol.AutoSafe, false)
	}
	return Verdict{
		Decision: Ask, Layer: "classifier", AskReason: "mode", Classify: true,
		Reason: "Auto mode needs the classifier (" + why + ").",
		Auto:   &AutoDecision{Layer: "classifier", Decision: string(Ask), Reason: why},
	}
}

// autoRuleReason is auto mode's rule tier: secret paths, protected writes,
// and for bash network, deletion, write targets and secret arguments.
func autoRuleReason(c *callCtx, pol *Policy) string {
	private := pol.Private
	switch {
	case c.isBash:
		if c.bgQuery || c.bash == nil {
			return ""
		}
		return c.bash.ruleTier(private)
	case c.isMemory || !c.hasPath:
		return ""
	case !c.pathOK:
		return "the path cannot be resolved"
	}
	if r := privateSecretReason(c.path, private); r != "" {
		return "touches " + r
	}
	if c.lexPath != c.path {
		if r := privateSecretReason(c.lexPath, private); r != "" {
			return "touches " + r
		}
	}
	if r := c.walkReason(private); r != "" {
		return r
	}
	if r := pol.Safety.keyReason(c.path); r != "" {
		return "touches " + r
	}
	if c.class == ClassWrite {
		if r := protectedWriteReason(c.path, c.root); r != "" {
			return r
		}
		if c.lexPath != c.path && c.lexPath != "" {
			return protectedWriteReason(c.lexPath, c.call.Cwd)
		}
	}
	return ""
}

// walkTools are the file tools that read a whole tree below their path.
var walkTools = map[string]bool{"grep": true, "glob": true, "ls": true}

// walkReason judges the root of a file tool that walks a tree (grep,
// glob, ls) by everything below it: an ancestor of a secret, /, /proc or
// /sys asks (the tools skip secret paths too, see tools/walk.go).
func (c *callCtx) walkReason(private []string) string {
	if !walkTools[c.tool] || c.class != ClassRead {
		return ""
	}
	for _, sp := range c.spells {
		if why := secrets.ReachesSecret(sp.path, sp.home, private...); why != "" {
			return "the " + c.tool + " tool reads everything below " + why
		}
	}
	if why := secrets.ReachesSecret(c.lexPath, c.call.Home, private...); why != "" {
		return "the " + c.tool + " tool reads everything below " + why
	}
	if c.tool == "glob" {
		// An absolute pattern, or one that climbs with "..", moves the
		// walk's root to its static part.
		var in struct {
			Pattern string `json:"pattern"`
		}
		_ = json.Unmarshal(c.call.Input, &in)
		for _, pat := range strings.Fields(in.Pattern) {
			pat = strings.TrimPrefix(pat, "!")
			if !strings.HasPrefix(pat, "/") && !strings.HasPrefix(pat, "..") && !strings.HasPrefix(pat, "~") {
				continue
			}
			base, ok := resolveToolPath(staticBase(pat), c.path, c.call.Home)
			if !ok {
				return "the glob pattern " + pat + " walks a directory that cannot be resolved"
			}
			if why := secrets.ReachesSecret(base, c.call.Home, private...); why != "" {
				return "the glob tool reads everything below " + why
			}
		}
	}
	return ""
}

// staticBase is the part of a glob pattern in front of its first
// component with a glob character.
func staticBase(pat string) string {
	parts := strings.Split(pat, "/")
	for i, p := range parts {
		if strings.ContainsAny(p, "*?[{\\") {
			if i == 0 {
				return "."
			}
			return strings.Join(parts[:i], "/") + "/"
		}
	}
	return pat
}

package permlog

// The stable codes of results that are not an allow. Deny codes end a
// call; ask codes name why a person was (or would be) asked. This is the
// one table of them; the README lists them.
const (
	// Denies.
	CodeDenyRule       = "deny_rule"         // a permission.deny rule (built-in or configured)
	CodeSafetyFile     = "safety_file"       // a write to ama's own safety files
	CodeUnjudgeable    = "input_unjudgeable" // the input could not be judged (allowlist: deny)
	CodeDangerous      = "dangerous"         // the dangerous list in allowlist mode
	CodePlanMode       = "plan_mode"         // plan mode refuses the call
	CodeAllowlist      = "allowlist"         // not in the allowlist
	CodeModeDeny       = "mode_deny"         // the mode refuses the call
	CodeHookDeny       = "hook_deny"         // a PreToolUse hook denied (or timed out)
	CodeUnattended     = "unattended"        // an ask nobody can answer
	CodeDeclined       = "declined"          // the person said no
	CodeNoAnswer       = "no_answer"         // no client, timeout or the approver failed
	CodeAborted        = "aborted"           // the run was aborted
	CodeReadOnlyAgent  = "read_only_agent"   // a read-only sub-agent's ask
	CodeClassifierDeny = "classifier_block"  // an accepted ask rule the classifier did not allow
	CodeInternal       = "internal_error"    // the permission check itself failed

	// Asks.
	AskMode       = "ask_mode"       // the mode asks
	AskDangerous  = "ask_dangerous"  // the dangerous list
	AskAutoRule   = "ask_auto_rule"  // auto mode's rule tier
	AskRule       = "ask_rule"       // a permission.ask rule
	AskClassifier = "ask_classifier" // the classifier wants a person (or failed)
	AskHook       = "ask_hook"       // a PreToolUse hook asked
	AskInput      = "ask_input"      // the input could not be judged
	AskLog        = "ask_log"        // the decision log could not be written (gate enforce)
	AskInternal   = "ask_internal"   // the permission check failed
)

// DenyCode is the code of a deny decided by the approvals step step.
func DenyCode(step string) string {
	switch step {
	case "deny-rule":
		return CodeDenyRule
	case "safety":
		return CodeSafetyFile
	case "input":
		return CodeUnjudgeable
	case "dangerous":
		return CodeDangerous
	case "plan":
		return CodePlanMode
	case "allowlist":
		return CodeAllowlist
	case "hook":
		return CodeHookDeny
	case "error":
		return CodeInternal
	case "classifier":
		return CodeClassifierDeny
	}
	return CodeModeDeny
}

// AskCode is the code of an ask decided by the approvals step step.
func AskCode(step string) string {
	switch step {
	case "dangerous":
		return AskDangerous
	case "auto-rule":
		return AskAutoRule
	case "ask-rule":
		return AskRule
	case "classifier":
		return AskClassifier
	case "hook":
		return AskHook
	case "input":
		return AskInput
	case "error":
		return AskInternal
	}
	return AskMode
}

package hooks

import "github.com/armadra/ama-rpc/approvals"

// LayerHook is the approvals.Verdict.Layer of a verdict a hook changed.
const LayerHook = "hook"

// AskReasonHook is the permission_request reason of an ask forced by a
// PreToolUse hook.
const AskReasonHook = "hook"

// ApplyToVerdict folds a PreToolUse hook's allow or ask into the
// pipeline's verdict (decided with Unattended off; the caller finalizes):
//   - allow lifts only a mode ask (layers mode, plan, classifier), never a
//     deny, the dangerous list, a permission.ask rule or another rule's ask;
//   - ask turns an allow (or a call handed to the auto classifier) into an
//     ask whose AskReason is "hook".
//
// Hook deny never reaches the pipeline: the call is refused before it.
func ApplyToVerdict(v approvals.Verdict, d Decision, reason string) approvals.Verdict {
	switch d {
	case Allow:
		if v.Decision != approvals.Ask || v.AskRule != "" {
			return v // an ask rule's ask is the person's
		}
		switch v.Layer {
		case "mode", "plan", "classifier":
		default:
			return v
		}
		v.Decision, v.Layer, v.Classify, v.AskReason = approvals.Allow, LayerHook, false, ""
		v.Reason = "Allowed by a PreToolUse hook"
		if reason != "" {
			v.Reason += ": " + reason
		}
		if v.Auto != nil {
			v.Auto = &approvals.AutoDecision{Layer: LayerHook, Decision: string(approvals.Allow), Reason: reason}
		}
	case Ask:
		if v.Decision != approvals.Allow && !v.Classify {
			return v
		}
		v.Decision, v.Layer, v.Classify, v.AskReason = approvals.Ask, LayerHook, false, AskReasonHook
		v.Reason = "A PreToolUse hook asks for approval"
		if reason != "" {
			v.Reason += ": " + reason
		}
		if v.Auto != nil {
			v.Auto = &approvals.AutoDecision{Layer: LayerHook, Decision: string(approvals.Ask), Reason: reason}
		}
	}
	return v
}

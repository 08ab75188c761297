package approvals

// AgentRule finds the rule of rules that covers running the external agent
// id through the task tool: `task` or `task(<pattern>)` with a wildcard
// pattern over agent ids (`task(claude)`, `task(acp:*)`), agents.md §7
// first-run confirmation. As deny rules (deny true) malformed rules and a
// bare `task` count as hits (fail closed); as allow rules malformed rules
// never match. It returns nil when no rule covers the agent.
func AgentRule(rules []Rule, id string, deny bool) *Rule {
	for i := range rules {
		r := &rules[i]
		if deny {
			if !r.forTool("task") {
				continue
			}
			if r.unusable() || r.err != nil || !r.hasPat || r.cmdW == nil || r.cmdW.match(id, true) {
				return r
			}
			continue
		}
		if r.unusable() || r.err != nil || !r.toolW.match("task", true) {
			continue
		}
		if !r.hasPat || (r.cmdW != nil && r.cmdW.match(id, true)) {
			return r
		}
	}
	return nil
}

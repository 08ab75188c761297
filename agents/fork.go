package agents

import (
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/session"
)

// forkChild opens the child of a context:"fork" task from a copy of the
// parent's branch (agents.md §5.3): the child keeps the parent's system
// prompt and tool table (tools the type may not use are refused when
// called), and its first prompt is the <task> brief with the role and the
// instructions. It returns nil (no error) when the fork falls back to a
// fresh child; details.context then says "fresh".
func (t *Task) forkChild(opts session.Options, parentTools []string) (*session.Session, error) {
	r := t.reg
	allowed := map[string]bool{}
	for _, n := range opts.ActiveTools {
		allowed[n] = true
	}
	var unavailable []string
	if len(parentTools) > 0 {
		opts.ActiveTools = append([]string(nil), parentTools...)
		for _, n := range parentTools {
			if !allowed[n] && n != ToolTask && n != ToolTaskCtl { // the task tools are refused by depth anyway
				unavailable = append(unavailable, n)
			}
		}
	} else {
		opts.ActiveTools = nil // the parent offers every tool
		unavailable = append(unavailable, t.typ.Disallowed...)
	}
	sort.Strings(unavailable) // parentTools come from a map
	opts.Unavailable, opts.Role, opts.EagerFile = unavailable, "", true
	data := opts.Parent.TaskData.(childTaskData)
	child, forkedFrom, fallback, err := r.parent.ForkChild(session.ForkRequest{
		ParentToolCallID: data.ParentToolCallID, Ratio: r.cfg.ForkRatio, Options: opts,
		TaskData: func(forkedFrom string) any {
			d := data
			d.Context, d.ForkedFrom = "fork", forkedFrom
			return d
		}})
	if err != nil {
		return nil, err
	}
	if child == nil {
		r.cfg.Log.Info("task context fork falls back to fresh", zap.String("task", data.TaskID), zap.String("reason", fallback))
		return nil, nil
	}
	r.mu.Lock()
	t.info.Context = "fork"
	r.mu.Unlock()
	r.cfg.Log.Debug("task forked", zap.String("task", data.TaskID), zap.String("forkedFrom", forkedFrom))
	parentCwd := ""
	if t.wt != nil {
		parentCwd = r.parent.Cwd()
	}
	t.brief = forkBrief(t.req.Prompt, t.typ.Body, unavailable, opts.Cwd, parentCwd)
	return child, nil
}

// childTaskData is the data of a child's first entry, custom{ama.task}
// (agents.md §6.6; a fork adds context and forkedFrom, §5.3).
type childTaskData struct {
	TaskID           string `json:"taskId"`
	Agent            string `json:"agent"`
	ParentToolCallID string `json:"parentToolCallId"`
	Description      string `json:"description"`
	ParentSession    string `json:"parentSession,omitempty"`
	Context          string `json:"context,omitempty"`
	ForkedFrom       string `json:"forkedFrom,omitempty"`
}

// forkBrief is the first user message of a fork child: who it is, what it
// may not use, its role and its instructions, in one <task> block (the
// structure of ama's; the wording is ours).
func forkBrief(prompt, role string, unavailable []string, cwd, parentCwd string) string {
	lines := []string{"<task>",
		"You are a sub-agent started from the conversation above. Everything above was addressed to the main agent; " +
			"from here on do only the task below. The main agent sees nothing of your work except your final reply, " +
			"and you may not delegate. Where this block disagrees with earlier plans or reminders, this block wins."}
	if parentCwd != "" {
		lines = append(lines, "You work in "+cwd+"; relative paths in the conversation above are relative to "+parentCwd+".")
	}
	if len(unavailable) > 0 {
		lines = append(lines, "These tools are not available to you and calls to them fail: "+strings.Join(unavailable, ", ")+".")
	}
	if r := strings.TrimSpace(role); r != "" {
		lines = append(lines, "<role>\n"+r+"\n</role>")
	}
	lines = append(lines, "<instructions>\n"+prompt+"\n</instructions>",
		"When you are done, end with a short report: what you did, what you found, and the files you changed, if any.",
		"</task>")
	return strings.Join(lines, "\n")
}

package plan

import (
	"fmt"
	"strings"
)

// ApprovedUserText is the user message (origin "plan") that starts the
// execution turn after an approve decision. It is a protocol value: hosts
// see it in before_agent_start and in the user message.
const ApprovedUserText = "The plan is approved. Go ahead."

// The reminder schedule of section 7.1: a reminder every ReminderEvery
// prompts, and every FullEvery-th reminder is the full text.
const (
	ReminderEvery = 5
	FullEvery     = 5
)

const reminderFull = `Plan mode is on. You may read and search files, run read-only shell commands (for example ls, cat, grep, rg, find, git status/log/show/diff) and start read-only subagents with task. Do not edit or create files, run builds or tests, or change any other state: tools that write or execute are refused while plan mode is on.

Workflow:
1. Investigate before you plan. Look up in the repository whatever you can find out yourself; ask the user only about choices the code cannot settle.
2. Once you know enough, write the whole plan as a single block, each tag alone on its own line:

<proposed_plan>
# <plan title>

## Background
One to three sentences on the goal and what you learned.

## Steps
- [ ] S1 <what to do> (files: path/to/file)
- [ ] S2 <what to do> [depends: S1] [agent: <agent name>]

## Verification
- <command to run or thing to check>

## Assumptions and risks
- <choices you made where the request left room>
</proposed_plan>

Plan rules:
- Be concrete enough that another engineer could follow the plan without deciding anything. Name the important files; describe a repeated change only once.
- Always include the Verification section.
- Write at most one <proposed_plan> block per reply; to change the plan, write the complete block again.
- Do not ask for approval in prose: the user reviews the block itself.
- If the user asks for changes while plan mode is on, plan those changes instead of making them.
- Do not record the plan with the todo tool; todo items are created from the steps once the plan is approved.`

const reminderBrief = "Reminder: plan mode is still on, so only read-only exploration is allowed. End with a <proposed_plan> block (Background; Steps as - [ ] S1 …; Verification; Assumptions and risks)."

const exitNote = "Plan mode is off. The read-only limits no longer apply; the current permission mode now decides what you may do."

const (
	approvedLead = "The user has approved the plan below, and plan mode is over: you may now edit files and run commands as far as the current permission mode allows."
	freshLead    = "Please carry out the approved plan below. It comes from an earlier session that you cannot see, so treat the plan as complete on its own."

	approvedTodoProgress = "A todo list has been made from the plan steps, with the first step already in progress. Follow it in order and mark each step with todo update as soon as you complete it."
	freshTodoProgress    = "Track progress with the todo tool: mark each step with todo update once it is complete."

	doneConvention       = "Each time you complete a step, put `[DONE:<step id>]` on a line of its own in your reply (for example `[DONE:S1]`) so that progress is tracked."
	approvedDoneProgress = "Follow the plan steps in order. " + doneConvention
)

// ReminderFull returns the full plan-mode reminder (an ama.plan_mode
// message): what plan mode allows, how to work, the <proposed_plan>
// template and the rules for the plan.
func ReminderFull() string { return reminderFull }

// ReminderBrief returns the short plan-mode reminder used between full ones.
func ReminderBrief() string { return reminderBrief }

// ReminderFor returns the reminder due before the n-th prompt since plan
// mode was entered (n starts at 1): one every ReminderEvery prompts
// (n = 1, 6, 11, …), the full text for every FullEvery-th of them
// (n = 1, 26, 51, …) and the brief text otherwise. ok is false when no
// reminder is due.
func ReminderFor(n int) (text string, ok bool) {
	return Reminder(n, false)
}

// Reminder is ReminderFor, except that afterCompaction forces the full text
// (the first prompt after a compaction gets it whatever n is).
func Reminder(n int, afterCompaction bool) (text string, ok bool) {
	if afterCompaction {
		return reminderFull, true
	}
	if n < 1 || (n-1)%ReminderEvery != 0 {
		return "", false
	}
	if ((n-1)/ReminderEvery)%FullEvery == 0 {
		return reminderFull, true
	}
	return reminderBrief, true
}

// ExitNote returns the ama.plan_mode_exit text, sent before the first
// prompt after plan mode was left without an approval.
func ExitNote() string { return exitNote }

// ApprovedHandoff returns the ama.plan_approved text that follows
// ApprovedUserText: a line saying the user approved the plan and plan mode
// ended; when the plan has steps, a progress line (todo update when the
// todo tool is active, else the [DONE:<step id>] convention); "Plan file:
// <path>" when there is a file; a blank line; and the plan inside
// <approved_plan> tags.
func ApprovedHandoff(markdown, filePath string, hasSteps, todoTool bool) string {
	progress := ""
	if hasSteps {
		progress = approvedDoneProgress
		if todoTool {
			progress = approvedTodoProgress
		}
	}
	return handoff(approvedLead, progress, markdown, filePath)
}

// FreshHandoff returns the first user message of the new session created by
// approve_fresh: a request to carry out the plan, then the same optional
// progress and "Plan file:" lines, a blank line and the <approved_plan>
// block as ApprovedHandoff.
func FreshHandoff(markdown, filePath string, hasSteps, todoTool bool) string {
	progress := ""
	if hasSteps {
		progress = doneConvention
		if todoTool {
			progress = freshTodoProgress
		}
	}
	return handoff(freshLead, progress, markdown, filePath)
}

func handoff(lead, progress, markdown, filePath string) string {
	lines := []string{lead}
	if progress != "" {
		lines = append(lines, progress)
	}
	if filePath != "" {
		lines = append(lines, "Plan file: "+filePath)
	}
	lines = append(lines, "", "<approved_plan>", markdown, "</approved_plan>")
	return strings.Join(lines, "\n")
}

// TodoDeniedHint returns the refusal text for the todo tool's set and
// update actions in plan mode (get stays allowed).
func TodoDeniedHint() string {
	return "The todo list cannot be changed in plan mode (only get works). Put the steps in your " + OpenTag + " block instead; the todo list is created from them when the plan is approved."
}

// BlockedHint returns the refusal text for a write or execute tool called
// in plan mode.
func BlockedHint(tool string) string {
	return fmt.Sprintf("Plan mode is on, so %s is refused: it could change files or state. Keep exploring with read-only tools and finish with a %s block.", tool, OpenTag)
}

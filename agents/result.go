package agents

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/armadra/ama-rpc/internal/utf8cut"
)

// ResultLimit is the size of a result given to the parent (UTF-8 bytes).
const ResultLimit = 50 * 1024

// Fixed texts the model sees (our wording; the facts follow agents.md).
const (
	emptyText       = "(the sub-agent returned no text)"
	abortedText     = "aborted by user"
	nestedText      = "task is not available here: sub-agents cannot start sub-agents (only the main agent can use task and task_ctl)."
	maxTurnsNote    = "[the sub-agent reached its turn limit; this is its final report]"
	finalReportText = "You have used all your turns. Do not call any more tools: reply now with your final report (what you did, what you found, files changed, what is left)."
	notifyRule      = "A <task-notification> user message is the report of a background task, not a message from the user; do not poll for it."
)

// startedText is the result of a task started in the background.
func startedText(id, agent string) string {
	return fmt.Sprintf("Started task %s (%s) in the background. A <task-notification> message arrives when it finishes; "+
		"use task_ctl to wait for it, stop it or read its output so far.", id, agent)
}

// backgroundedText is the result of a foreground task moved to the
// background.
func backgroundedText(reason string, after int64) string {
	head := "Moved to the background by the user, still running."
	if reason == "timeout" {
		head = fmt.Sprintf("Moved to the background after %ds, still running.", after/1000)
	}
	return head + " A <task-notification> message arrives when it finishes; task_ctl can wait for it, stop it or read its output. " +
		"Only wait for it if the user asks you to."
}

// waitDetachedText answers a task_ctl wait whose task was moved to the
// background while waiting.
const waitDetachedText = "The task was moved to the background while you waited. Do not wait again: a <task-notification> will report its result."

// capResult cuts text over ResultLimit to a head (70 %) and a tail (30 %)
// around a line naming the omitted size and the full output file.
func capResult(text, file string) (string, bool) {
	if len(text) <= ResultLimit {
		return text, false
	}
	headN := ResultLimit * 7 / 10
	tailN := ResultLimit - headN
	head := utf8cut.Head(text, headN) // a half character is dropped
	tail := utf8cut.Tail(text, tailN)
	omitted := len(text) - len(head) - len(tail)
	return head + fmt.Sprintf("\n\n[… %d bytes omitted; full output: %s …]\n\n", omitted, file) + tail, true
}

// formatTokens writes a token count as 950, 12.3k or 1.2M.
func formatTokens(n int) string {
	trim := func(f float64) string {
		return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0")
	}
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 1_000_000:
		return trim(float64(n)/1000) + "k"
	}
	return trim(float64(n)/1_000_000) + "M"
}

// escapeAttr escapes an attribute value of a task notification.
func escapeAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;").Replace(s)
}

// notificationText is the user message that reports a finished background
// task to the parent.
func notificationText(info *TaskInfo, text string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<task-notification taskId="%s" agent="%s" status="%s"`, escapeAttr(info.TaskID), escapeAttr(info.Agent), escapeAttr(info.Status))
	if info.Turns != nil {
		fmt.Fprintf(&b, ` turns="%d"`, *info.Turns)
	}
	if info.Usage != nil {
		fmt.Fprintf(&b, ` tokens="%s"`, formatTokens(info.Usage.TotalTokens))
	}
	if info.OutputFile != "" {
		fmt.Fprintf(&b, ` outputFile="%s"`, escapeAttr(info.OutputFile))
	}
	b.WriteString(">\n")
	b.WriteString(text)
	b.WriteString("\n</task-notification>")
	return b.String()
}

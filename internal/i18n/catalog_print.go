package i18n

// Print mode's stderr lines (ama's print-mode.md §5): stdin notices,
// retries, the end-of-run explanation, the background wait.
const (
	PrintNoPrompt      Key = "print.noPrompt"
	PrintNoPipedInput  Key = "print.noPipedInput"
	PrintWaitingStdin  Key = "print.waitingForStdin"
	PrintSecond        Key = "print.duration.second"
	PrintSeconds       Key = "print.duration.seconds"
	PrintMillis        Key = "print.duration.milliseconds"
	PrintRetry         Key = "print.retry"
	PrintAborted       Key = "print.aborted"
	PrintModelFailed   Key = "print.modelCallFailed"
	PrintPlanPending   Key = "print.planPending"
	PrintDeniedOne     Key = "print.denied.one"
	PrintDeniedMany    Key = "print.denied.many"
	PrintDeniedReason  Key = "print.denied.reason"
	PrintDeniedHint    Key = "print.denied.hint"
	PrintTurnLimit     Key = "print.turnLimit"
	PrintCostLimit     Key = "print.costLimit"
	PrintWaitTaskOne   Key = "print.waitBackground.one"
	PrintWaitTasksMany Key = "print.waitBackground.many"
	PrintSearchOne     Key = "print.searchHint.one"
	PrintSearchBoth    Key = "print.searchHint.both"
	PrintFromNoUser    Key = "print.from.noUserMessages"
	PrintFromTooFew    Key = "print.from.tooFew"
)

var printTexts = map[Lang]map[Key]string{
	En: {
		PrintNoPrompt:      "-p needs a prompt (positional argument or stdin pipe)",
		PrintNoPipedInput:  "ama: no piped input within %s, ignored; add a trailing - to wait for stdin",
		PrintWaitingStdin:  "ama: waiting for stdin (end it with Ctrl+D, or pass --no-stdin)",
		PrintSecond:        "1 second",
		PrintSeconds:       "%d seconds",
		PrintMillis:        "%d ms",
		PrintRetry:         "ama: ↻ retry %d/%d (in %ds): %s",
		PrintAborted:       "the run was aborted",
		PrintModelFailed:   "the model call failed",
		PrintPlanPending:   `ama: plan v%d (%s) is saved and was not executed; approve it in an interactive session, with plan_response over RPC, or set plan.unattended: "approve"`,
		PrintDeniedOne:     "1 tool call denied: %s",
		PrintDeniedMany:    "%d tool calls denied: %s",
		PrintDeniedReason:  " (%s)",
		PrintDeniedHint:    "ama: %s; -p has nobody to approve calls: --permission-mode auto-edit|auto or --allow <rule> lets them run",
		PrintTurnLimit:     "ama: the turn limit %d (--max-turns / limits.maxTurns) ended the run before it finished",
		PrintCostLimit:     "ama: the cost limit %s (--max-cost / limits.maxCostUsd) ended the run before it finished (spent %s)",
		PrintWaitTaskOne:   "ama: waiting for 1 background task and its notification turn (Ctrl+C stops them)",
		PrintWaitTasksMany: "ama: waiting for %d background tasks and their notification turns (Ctrl+C stops them)",
		PrintSearchOne:     `ama: the %[1]s tool preset has no %[2]s tool, so the search went to bash; --tools +%[2]s or tools.default: ["+%[2]s"] in the config adds it`,
		PrintSearchBoth:    `ama: the %s tool preset has no grep and no glob tool, so the search went to bash; --tools +grep,+glob or tools.default: ["+grep","+glob"] in the config adds them`,
		PrintFromNoUser:    "--from: session %s holds no user message",
		PrintFromTooFew:    "--from: session %s has no user message #%d (its last is #%d)",
	},
	Zh: {
		PrintNoPrompt:      "-p 需要提示词（位置参数或标准输入管道）",
		PrintNoPipedInput:  "ama: %s 内没有管道输入，已忽略；在末尾加一个 - 可以等待标准输入",
		PrintWaitingStdin:  "ama: 正在等待标准输入（用 Ctrl+D 结束，或传 --no-stdin）",
		PrintSecond:        "1 秒",
		PrintSeconds:       "%d 秒",
		PrintMillis:        "%d 毫秒",
		PrintRetry:         "ama: ↻ 重试 %d/%d（%d 秒后）：%s",
		PrintAborted:       "运行已中止",
		PrintModelFailed:   "模型调用失败",
		PrintPlanPending:   `ama: 计划 v%d（%s）已保存但没有执行；请在交互会话中批准它，或通过 RPC 的 plan_response 批准，或设置 plan.unattended: "approve"`,
		PrintDeniedOne:     "1 次工具调用被拒：%s",
		PrintDeniedMany:    "%d 次工具调用被拒：%s",
		PrintDeniedReason:  "（%s）",
		PrintDeniedHint:    "ama: %s；-p 模式下没有人审批调用：用 --permission-mode auto-edit|auto 或 --allow <规则> 放行",
		PrintTurnLimit:     "ama: 轮次上限 %d（--max-turns / limits.maxTurns）在运行完成前结束了它",
		PrintCostLimit:     "ama: 花费上限 %s（--max-cost / limits.maxCostUsd）在运行完成前结束了它（已花费 %s）",
		PrintWaitTaskOne:   "ama: 正在等待 1 个后台任务及其通知轮次（Ctrl+C 可停止）",
		PrintWaitTasksMany: "ama: 正在等待 %d 个后台任务及其通知轮次（Ctrl+C 可停止）",
		PrintSearchOne:     `ama: 工具预设 %[1]s 里没有 %[2]s 工具，所以搜索改走了 bash；--tools +%[2]s 或配置里的 tools.default: ["+%[2]s"] 能加上它`,
		PrintSearchBoth:    `ama: 工具预设 %s 里没有 grep 和 glob 工具，所以搜索改走了 bash；--tools +grep,+glob 或配置里的 tools.default: ["+grep","+glob"] 能加上它们`,
		PrintFromNoUser:    "--from：会话 %s 里没有用户消息",
		PrintFromTooFew:    "--from：会话 %s 没有第 %d 条用户消息（最后一条是第 %d 条）",
	},
}

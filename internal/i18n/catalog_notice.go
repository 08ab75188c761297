package i18n

// The sentences of notification events a session composes, and the
// descriptions of its builtin slash commands (get_commands). The session
// cannot import this package: it names the key in
// events.Notification.Key (a string) with the English text in Message,
// and the wire layer renders the key in the interface language.
const (
	NoticeDecisionLogAsk      Key = "notice.decisionLog.asked"
	NoticeDecisionLogUnlogged Key = "notice.decisionLog.unlogged"
	NoticeCheckpointFailed    Key = "notice.checkpointFailed"
	NoticeSessionWriteFailed  Key = "notice.sessionFile.writeFailed"
	NoticeSessionRewritten    Key = "notice.sessionFile.rewritten"

	// get_commands' builtin descriptions (session.Command.Key).
	CommandModel      Key = "command.builtin.model"
	CommandThinking   Key = "command.builtin.thinking"
	CommandPermission Key = "command.builtin.permission"
	CommandName       Key = "command.builtin.name"
)

var noticeTexts = map[Lang]map[Key]string{
	En: {
		NoticeDecisionLogAsk:      "The permission decision log cannot be written; calls that would run without a person are asked until it can.",
		NoticeDecisionLogUnlogged: "The permission decision log cannot be written; decisions go on unlogged.",
		NoticeCheckpointFailed:    "the checkpoint of %s could not be saved, so rewinding this turn cannot restore it: %s",
		NoticeSessionWriteFailed:  "session file %s could not be written (entries are kept in memory and retried): %s",
		NoticeSessionRewritten:    "%s; it was written again from memory (%d entries)",

		CommandModel:      "Switch the model: /model <provider>/<id>",
		CommandThinking:   "Set the thinking level: /thinking off|minimal|low|medium|high|xhigh",
		CommandPermission: "Set the permission mode: /permission plan|allowlist|default|auto-edit|auto|full-auto",
		CommandName:       "Name this session: /name <text>",
	},
	Zh: {
		NoticeDecisionLogAsk:      "无法写入权限决策日志；在能写入之前，本会无人确认就运行的调用都会先询问。",
		NoticeDecisionLogUnlogged: "无法写入权限决策日志；决策照常进行，但不再记录。",
		NoticeCheckpointFailed:    "%s 的检查点无法保存，回退这一轮时无法恢复它：%s",
		NoticeSessionWriteFailed:  "会话文件 %s 无法写入（条目保留在内存中并会重试）：%s",
		NoticeSessionRewritten:    "%s；已从内存重新写入（%d 个条目）",

		CommandModel:      "切换模型：/model <提供方>/<id>",
		CommandThinking:   "设置思考级别：/thinking off|minimal|low|medium|high|xhigh",
		CommandPermission: "设置权限模式：/permission plan|allowlist|default|auto-edit|auto|full-auto",
		CommandName:       "给本会话命名：/name <文字>",
	},
}

package i18n

// Key names one whole sentence of the catalog (domain.component.purpose).
type Key string

// The catalog is a small hand-written table rather than
// golang.org/x/text/message: that printer localizes numbers (%d of 1234
// prints "1,234" in English), and the contract keeps numbers, codes and
// field names untranslated; two languages without plural rules need no
// more than fmt verbs. TestCatalogComplete checks that every key exists in
// both languages with the same verbs in the same order. It has one file
// per domain (core: this file; catalog_cli.go, catalog_print.go,
// catalog_notice.go, catalog_acp.go), merged once at package initialisation (a key
// defined twice panics there).
const (
	// CLI.
	CLIUsageError Key = "cli.usageError"
	CLIBadLang    Key = "cli.badLang"
	CLIHelpTitle  Key = "cli.help.title"
	CLIHelpUsage  Key = "cli.help.usage"
	CLIHelpFlags  Key = "cli.help.flags"
	CLIHelpEnv    Key = "cli.help.environment"
	CLIHelpExit   Key = "cli.help.exitCodes"
	CLIHelpLang   Key = "cli.help.lang"

	CLIBadMode           Key = "cli.badMode"
	CLIBadPermissionMode Key = "cli.badPermissionMode"
	CLIBadThinking       Key = "cli.badThinking"
	CLIBadSessionID      Key = "cli.badSessionID"
	CLISessionExclusive  Key = "cli.sessionExclusive"
	CLIHostExclusive     Key = "cli.hostExclusive"

	// Error responses: fixed texts chosen in rpc/internal/wirecode.
	RPCUnknownCommand Key = "rpc.unknownCommand"
	RPCIDTooLong      Key = "rpc.idTooLong"
	RPCNotBuilt       Key = "rpc.notBuilt"
	RPCInternalError  Key = "rpc.internalError"
	RPCBusy           Key = "rpc.busy"
	RPCNotImplemented Key = "rpc.notImplemented"
	RPCSessionClosed  Key = "rpc.sessionClosed"
	RPCNoModel        Key = "rpc.noModel"
	RPCPlanNotFound   Key = "rpc.planNotFound"
	RPCNoCheckpoint   Key = "rpc.noCheckpoint"
	RPCNothingCompact Key = "rpc.nothingToCompact"
	RPCSessionMissing Key = "rpc.sessionNotFound"
	RPCSessionLocked  Key = "rpc.sessionLocked"
	RPCUnknownSkill   Key = "rpc.unknownSkill"

	// ACP JSON-RPC errors with a fixed text.
	RPCMethodNotFound   Key = "acp.methodNotFound"
	RPCRequestCancelled Key = "acp.requestCancelled"
	RPCAuthRequired     Key = "acp.authRequired"
	RPCInvalidParams    Key = "acp.invalidParams"

	// Notifications the session composes (events.Notification.Key holds
	// the key as a string: the session cannot import this package).
	NoticeCompactFailed  Key = "notice.compactFailed"
	NoticeContextTooLong Key = "notice.contextTooLong"
)

var core = map[Lang]map[Key]string{
	En: {
		CLIUsageError:        "ama-rpc: %v (ama-rpc --help lists the flags)",
		CLIBadLang:           "--lang must be zh or en, not %q",
		CLIHelpTitle:         "ama-rpc: the ama coding-agent server (JSONL RPC or ACP on stdio)",
		CLIHelpUsage:         "Usage:",
		CLIHelpFlags:         "Flags:",
		CLIHelpEnv:           "Environment:",
		CLIHelpExit:          "Exit codes:",
		CLIBadMode:           "--mode must be rpc or acp, not %q",
		CLIBadPermissionMode: "--permission-mode must be one of %s, not %q",
		CLIBadThinking:       "--thinking must be off, minimal, low, medium, high or xhigh, not %q",
		CLIBadSessionID:      "--session-id must be a UUID such as 0b5e6f3a-3c1d-4e2f-9a7b-1c2d3e4f5a6b, not %q",
		CLISessionExclusive:  "--session, --resume, --continue and --session-id are exclusive",
		CLIHostExclusive:     "--host and --host-cmd are exclusive",
		CLIHelpLang:          "interface language of human-readable text: zh or en (AMA_LANG wins; default: ui.language, then LC_ALL/LC_MESSAGES/LANG)",

		RPCUnknownCommand: "unknown command: %s",
		RPCIDTooLong:      "id longer than %d bytes",
		RPCNotBuilt:       "not implemented: %s is not built yet",
		RPCInternalError:  "internal error in %s",
		RPCBusy:           "session is busy",
		RPCNotImplemented: "not implemented",
		RPCSessionClosed:  "session closed",
		RPCNoModel:        "no model selected",
		RPCPlanNotFound:   "plan not found",
		RPCNoCheckpoint:   "no checkpoint",
		RPCNothingCompact: "nothing to compact",
		RPCSessionMissing: "session not found",
		RPCSessionLocked:  "session locked",
		RPCUnknownSkill:   "unknown skill",

		RPCMethodNotFound:   "method not found",
		RPCRequestCancelled: "request cancelled",
		RPCAuthRequired:     "authentication required",
		RPCInvalidParams:    "invalid params",

		NoticeCompactFailed:  "automatic compaction failed: %s",
		NoticeContextTooLong: "the context is too long and could not be compacted: %s",
	},
	Zh: {
		CLIUsageError:        "ama-rpc：%v（ama-rpc --help 列出全部参数）",
		CLIBadLang:           "--lang 只能是 zh 或 en，不能是 %q",
		CLIHelpTitle:         "ama-rpc：ama 编程智能体服务（标准输入输出上的 JSONL RPC 或 ACP）",
		CLIHelpUsage:         "用法：",
		CLIHelpFlags:         "参数：",
		CLIHelpEnv:           "环境变量：",
		CLIHelpExit:          "退出码：",
		CLIBadMode:           "--mode 只能是 rpc 或 acp，不能是 %q",
		CLIBadPermissionMode: "--permission-mode 只能是 %s 之一，不能是 %q",
		CLIBadThinking:       "--thinking 只能是 off、minimal、low、medium、high 或 xhigh，不能是 %q",
		CLIBadSessionID:      "--session-id 必须是 UUID（例如 0b5e6f3a-3c1d-4e2f-9a7b-1c2d3e4f5a6b），不能是 %q",
		CLISessionExclusive:  "--session、--resume、--continue 和 --session-id 只能选一个",
		CLIHostExclusive:     "--host 和 --host-cmd 只能选一个",
		CLIHelpLang:          "面向人的文字所用的界面语言：zh 或 en（AMA_LANG 优先；默认取 ui.language，其次 LC_ALL/LC_MESSAGES/LANG）",

		RPCUnknownCommand: "未知命令：%s",
		RPCIDTooLong:      "id 超过 %d 字节",
		RPCNotBuilt:       "尚未实现：%s 还没有构建",
		RPCInternalError:  "%s 内部错误",
		RPCBusy:           "会话正忙",
		RPCNotImplemented: "尚未实现",
		RPCSessionClosed:  "会话已关闭",
		RPCNoModel:        "未选择模型",
		RPCPlanNotFound:   "找不到计划",
		RPCNoCheckpoint:   "没有检查点",
		RPCNothingCompact: "没有可压缩的内容",
		RPCSessionMissing: "找不到会话",
		RPCSessionLocked:  "会话已被锁定",
		RPCUnknownSkill:   "未知技能",

		RPCMethodNotFound:   "找不到方法",
		RPCRequestCancelled: "请求已取消",
		RPCAuthRequired:     "需要认证",
		RPCInvalidParams:    "参数无效",

		NoticeCompactFailed:  "自动压缩失败：%s",
		NoticeContextTooLong: "上下文过长，无法压缩：%s",
	},
}

// catalog is every domain's table merged, per language.
var catalog = merge(core, cliTexts, printTexts, noticeTexts, acpTexts)

func merge(domains ...map[Lang]map[Key]string) map[Lang]map[Key]string {
	out := map[Lang]map[Key]string{}
	for _, d := range domains {
		for l, texts := range d {
			if out[l] == nil {
				out[l] = map[Key]string{}
			}
			for k, v := range texts {
				if _, dup := out[l][k]; dup {
					panic("i18n: key " + string(k) + " defined twice")
				}
				out[l][k] = v
			}
		}
	}
	return out
}

// Has reports whether key is in the catalog of lang (keys built from a
// name, such as a flag's, are checked with it by their tests).
func Has(lang Lang, key Key) bool {
	_, ok := catalog[lang][key]
	return ok
}

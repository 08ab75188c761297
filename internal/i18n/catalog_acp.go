package i18n

// ACP's texts for people (spec i18n.md §2): permission option names, the
// permission modes' descriptions (their names are display labels that
// stay English), the config options' names and the thinking levels'
// names. Ids, kinds and values are never translated.
const (
	ACPOptAllow        Key = "acp.permission.allow"
	ACPOptAllowSession Key = "acp.permission.allowSession"
	ACPOptDeny         Key = "acp.permission.deny"
	ACPOptDefer        Key = "acp.permission.defer"
	ACPOptApprovePlan  Key = "acp.plan.approve"
	ACPOptRejectPlan   Key = "acp.plan.reject"
	ACPConfigMode      Key = "acp.config.permissionMode"
	ACPConfigModel     Key = "acp.config.model"
	ACPConfigThinking  Key = "acp.config.thinkingLevel"

	// JSON-RPC error messages with a fixed sentence (the values are names,
	// ids and paths).
	ACPErrUnknownModeOneOf   Key = "acp.error.unknownModeOneOf"
	ACPErrValueNotString     Key = "acp.error.valueNotString"
	ACPErrUnknownMode        Key = "acp.error.unknownMode"
	ACPErrBadModel           Key = "acp.error.badModel"
	ACPErrThinkingNotOffered Key = "acp.error.thinkingNotOffered"
	ACPErrUnknownConfig      Key = "acp.error.unknownConfigOption"
	ACPErrNoAuthMethod       Key = "acp.error.noAuthMethod"
	ACPErrWithdrawn          Key = "acp.error.permissionWithdrawn"
	ACPErrImageFields        Key = "acp.error.imageNeedsData"
	ACPErrResourceLinkURI    Key = "acp.error.resourceLinkNeedsURI"
	ACPErrResourceURI        Key = "acp.error.resourceNeedsURI"
	ACPErrNoAudio            Key = "acp.error.audioUnsupported"
	ACPErrUnknownBlock       Key = "acp.error.unknownContentBlock"
	ACPErrEmptyPrompt        Key = "acp.error.emptyPrompt"
	ACPErrSessionNotOpen     Key = "acp.error.sessionNotOpen"
	ACPErrMethodNotFound     Key = "acp.error.methodNotFound"
	ACPErrCwdNotAbs          Key = "acp.error.cwdNotAbsolute"
	ACPErrCwdFixed           Key = "acp.error.cwdFixed"
	ACPErrShuttingDown       Key = "acp.error.shuttingDown"
	ACPErrBadSessionID       Key = "acp.error.invalidSessionId"
	ACPErrNoSessionFor       Key = "acp.error.noSessionFor"
	ACPErrSessionElsewhere   Key = "acp.error.sessionBelongsElsewhere"
	ACPErrBadCursor          Key = "acp.error.invalidCursor"
)

// ModeDescKey is the key of a permission mode's description.
func ModeDescKey(mode string) Key { return Key("acp.mode." + mode + ".description") }

// ThinkingNameKey is the key of a thinking level's display name.
func ThinkingNameKey(level string) Key { return Key("acp.thinking." + level) }

var acpTexts = map[Lang]map[Key]string{
	En: {
		ACPOptAllow:        "Allow",
		ACPOptAllowSession: "Allow for this session",
		ACPOptDeny:         "Deny",
		ACPOptDefer:        "Decide later",
		ACPOptApprovePlan:  "Approve and run the plan",
		ACPOptRejectPlan:   "Reject the plan",
		ACPConfigMode:      "Permission mode",
		ACPConfigModel:     "Model",
		ACPConfigThinking:  "Thinking level",

		ModeDescKey("plan"):      "Read-only research: only read-only commands run; a plan is proposed for approval before anything changes",
		ModeDescKey("allowlist"): "Only calls matching an allow rule run; everything else is denied without asking",
		ModeDescKey("default"):   "Ask before writing files or running commands",
		ModeDescKey("auto-edit"): "File edits are accepted; commands still ask",
		ModeDescKey("auto"):      "ama judges each step: safe ones run, risky ones ask",
		ModeDescKey("full-auto"): "Everything runs (dangerous commands still ask)",

		ThinkingNameKey("off"):     "Off",
		ThinkingNameKey("minimal"): "Minimal",
		ThinkingNameKey("low"):     "Low",
		ThinkingNameKey("medium"):  "Medium",
		ThinkingNameKey("high"):    "High",
		ThinkingNameKey("xhigh"):   "Extra high",

		ACPErrUnknownModeOneOf:   "unknown mode %q (one of plan, allowlist, default, auto-edit, auto, full-auto)",
		ACPErrValueNotString:     "value must be a string (a value id of option %q)",
		ACPErrUnknownMode:        "unknown mode %q",
		ACPErrBadModel:           "model must be provider/id, not %q",
		ACPErrThinkingNotOffered: "thinking level %q is not offered for %s",
		ACPErrUnknownConfig:      "unknown config option %q (one of mode, model, thinking)",
		ACPErrNoAuthMethod:       "no authentication method is offered (authMethods is empty)",
		ACPErrWithdrawn:          "permission request withdrawn",
		ACPErrImageFields:        "prompt[%d]: an image needs data and mimeType",
		ACPErrResourceLinkURI:    "prompt[%d]: a resource_link needs a uri",
		ACPErrResourceURI:        "prompt[%d]: a resource needs resource.uri",
		ACPErrNoAudio:            "prompt[%d]: audio is not supported (promptCapabilities.audio is false)",
		ACPErrUnknownBlock:       "prompt[%d]: unknown content block type %q",
		ACPErrEmptyPrompt:        "prompt is empty",
		ACPErrSessionNotOpen:     "session %s is not open (session/new, session/load or session/resume first)",
		ACPErrMethodNotFound:     "method not found: %s",
		ACPErrCwdNotAbs:          "cwd must be an absolute path, not %q",
		ACPErrCwdFixed:           "cwd %s is not the directory ama-rpc serves (%s); start ama-rpc there",
		ACPErrShuttingDown:       "ama-rpc is shutting down",
		ACPErrBadSessionID:       "invalid sessionId %q",
		ACPErrNoSessionFor:       "no session %s for %s",
		ACPErrSessionElsewhere:   "session %s belongs to %s, not %s",
		ACPErrBadCursor:          "invalid cursor %q",
	},
	Zh: {
		ACPOptAllow:        "允许",
		ACPOptAllowSession: "本会话内允许",
		ACPOptDeny:         "拒绝",
		ACPOptDefer:        "稍后决定",
		ACPOptApprovePlan:  "批准并执行计划",
		ACPOptRejectPlan:   "拒绝计划",
		ACPConfigMode:      "权限模式",
		ACPConfigModel:     "模型",
		ACPConfigThinking:  "思考级别",

		ModeDescKey("plan"):      "只读调研：只运行只读命令；任何改动之前先提出计划等待批准",
		ModeDescKey("allowlist"): "只运行匹配允许规则的调用；其余一律拒绝，不询问",
		ModeDescKey("default"):   "写文件或运行命令之前先询问",
		ModeDescKey("auto-edit"): "文件编辑直接接受；命令仍会询问",
		ModeDescKey("auto"):      "ama 逐步判断：安全的直接运行，有风险的询问",
		ModeDescKey("full-auto"): "全部直接运行（危险命令仍会询问）",

		ThinkingNameKey("off"):     "关闭",
		ThinkingNameKey("minimal"): "极少",
		ThinkingNameKey("low"):     "低",
		ThinkingNameKey("medium"):  "中",
		ThinkingNameKey("high"):    "高",
		ThinkingNameKey("xhigh"):   "极高",

		ACPErrUnknownModeOneOf:   "未知模式 %q（可选 plan、allowlist、default、auto-edit、auto、full-auto）",
		ACPErrValueNotString:     "value 必须是字符串（选项 %q 的一个值 id）",
		ACPErrUnknownMode:        "未知模式 %q",
		ACPErrBadModel:           "model 必须是 提供方/id，不能是 %q",
		ACPErrThinkingNotOffered: "%q 思考级别不适用于 %s",
		ACPErrUnknownConfig:      "未知配置项 %q（可选 mode、model、thinking）",
		ACPErrNoAuthMethod:       "没有提供任何认证方式（authMethods 为空）",
		ACPErrWithdrawn:          "权限请求已撤回",
		ACPErrImageFields:        "prompt[%d]：图片需要 data 和 mimeType",
		ACPErrResourceLinkURI:    "prompt[%d]：resource_link 需要 uri",
		ACPErrResourceURI:        "prompt[%d]：resource 需要 resource.uri",
		ACPErrNoAudio:            "prompt[%d]：不支持音频（promptCapabilities.audio 为 false）",
		ACPErrUnknownBlock:       "prompt[%d]：未知的内容块类型 %q",
		ACPErrEmptyPrompt:        "prompt 为空",
		ACPErrSessionNotOpen:     "会话 %s 没有打开（请先调用 session/new、session/load 或 session/resume）",
		ACPErrMethodNotFound:     "找不到方法：%s",
		ACPErrCwdNotAbs:          "cwd 必须是绝对路径，不能是 %q",
		ACPErrCwdFixed:           "cwd %s 不是 ama-rpc 服务的目录（%s）；请在那里启动 ama-rpc",
		ACPErrShuttingDown:       "ama-rpc 正在关闭",
		ACPErrBadSessionID:       "无效的 sessionId %q",
		ACPErrNoSessionFor:       "没有会话 %s（目录 %s）",
		ACPErrSessionElsewhere:   "会话 %s 属于 %s，不属于 %s",
		ACPErrBadCursor:          "无效的 cursor %q",
	},
}

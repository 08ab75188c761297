package i18n

// The command line: --help (one pre-formatted block per section and one
// sentence per flag), the flag package's own parse errors, the print-mode
// usage reasons and the subcommands' help and usage lines.
const (
	CLIHelpSynopsis   Key = "cli.help.synopsis"
	CLIHelpEnvBlock   Key = "cli.help.environmentBlock"
	CLIHelpExitBlock  Key = "cli.help.exitCodesBlock"
	CLIFlagDefault    Key = "cli.flag.default"       // a flag's default value, unquoted
	CLIFlagDefaultStr Key = "cli.flag.defaultString" // a string flag's default value, quoted

	// The flag package's parse errors, recognised by their English form.
	CLIFlagUndefined  Key = "cli.flagError.undefined"
	CLIFlagNeedsValue Key = "cli.flagError.needsArgument"
	CLIFlagBadSyntax  Key = "cli.flagError.badSyntax"
	CLIFlagBadValue   Key = "cli.flagError.invalidValue"
	CLIFlagBadBool    Key = "cli.flagError.invalidBoolean"

	// Print-mode usage reasons.
	CLIPromptNeedsP    Key = "cli.print.promptNeedsP"
	CLIFlagNeedsP      Key = "cli.print.flagNeedsP"
	CLIPWithMode       Key = "cli.print.pWithMode"
	CLIBadOutputFormat Key = "cli.print.badOutputFormat"
	CLIBadMaxTurns     Key = "cli.print.badMaxTurns"
	CLIBadMaxCost      Key = "cli.print.badMaxCost"
	CLIDashNoStdin     Key = "cli.print.dashWithNoStdin"
	CLIBadFrom         Key = "cli.print.badFrom"
	CLIForkExclusive   Key = "cli.fork.exclusive"
	CLIForkACP         Key = "cli.fork.acp"

	// Subcommands.
	CLISubError      Key = "cli.sub.error" // "<subcommand>: <reason>"
	CLIUsageOf       Key = "cli.sub.usageOf"
	CLIExplainUsage  Key = "cli.explain.usage"
	CLISessionsUsage Key = "cli.sessions.usage"
	CLISchemaUsage   Key = "cli.schema.usage"
	CLIUnexpectedArg Key = "cli.sub.unexpectedArgument"
	CLISchemaWrote   Key = "cli.schema.wrote"
)

// FlagKey is the key of the help sentence of flag name in the flag set
// set ("main" for the server's flags, else the subcommand: "explain",
// "sessions", "schema").
func FlagKey(set, name string) Key { return Key("cli." + set + ".flag." + name) }

var cliTexts = map[Lang]map[Key]string{
	En: {
		CLIHelpSynopsis: `  ama-rpc [flags]                    serve --mode rpc (default) or --mode acp on stdin/stdout
  ama-rpc -p [flags] [prompt…] [-]   print mode: run one prompt unattended, print the result, exit
  ama-rpc sessions list [--cwd dir] [--all] [--session-dir dir]
                                     print the stored sessions, one JSON object per line
  ama-rpc explain [--cwd dir] [--permission-mode m] [--allow r] [--deny r] [--ask r] [--unattended]
                                     run the permission pipeline over tool calls read from stdin
  ama-rpc explain --replay file [--candidate] [--all] [--sessions dir]
                                     re-judge recorded verdicts; print those that would change
  ama-rpc schema [--out dir]         print (or write dir/rpc.schema.json) the JSON Schema of the protocol
  ama-rpc replay --script fake.json [--mode rpc|acp] [--check expected.jsonl] < commands.jsonl
                                     the replay kit: the server with a scripted fake model, a normalised transcript
  ama-rpc help                       print this text`,
		CLIHelpEnvBlock: `  HOME, XDG_CONFIG_HOME, XDG_DATA_HOME   locate config (~/.config/ama) and data (~/.local/share/ama)
  AMA_CONFIG_DIR, AMA_DATA_DIR           override those two directories
  AMA_FAKE_SCRIPT                        JSON script of the fake model (see README "Fake provider scripts")
  AMA_FAKE_RECORD                        file receiving one JSON line per fake model request
  AMA_APPROVAL_TIMEOUT_MS                how long a permission ask waits for the host (default 600000)
  AMA_STDIN_WAIT_MS                      -p with prompt words: wait this long for piped stdin (default 2000, 0: never)
  AMA_NODE                               JavaScript runtime of host adapters (node, or Electron with ELECTRON_RUN_AS_NODE)
  OPENAI_API_KEY, OPENAI_BASE_URL        key and endpoint of the openai provider
  OPENROUTER_API_KEY, DEEPSEEK_API_KEY, GROQ_API_KEY, TOGETHER_API_KEY
                                         keys of the other presets
  AMA_API_KEY_<ID>                       key of any provider by id (e.g. AMA_API_KEY_WORK)
  AMA_LANG                               interface language (zh or en; beats --lang, ui.language, LC_ALL/LC_MESSAGES/LANG)`,
		CLIHelpExitBlock: `  0        stdin ended and every started run finished (also --help, --version, help)
  1        -p: the run failed (model error, blocked prompt) or was aborted
  2        bad flags or arguments (unknown flag, bad --mode/--permission-mode/--thinking value, --session-id not a UUID,
           print-mode flags without -p, -p without a prompt, an unusable image)
  3        configuration error (unreadable or invalid config file, missing cwd)
  4        no usable model (none given, unknown provider or model, missing key); --mode acp answers -32000 instead
  5        session file missing, corrupt, locked or of another directory
  6        host adapter failed to load or start (missing file, load error, create() failed or timed out, no Node)
  7        -p: a tool call was denied (and nothing worse happened)
  8        -p: a budget (--max-turns, --max-cost, limits.*) ended the run
  9        -p: a plan awaits approval (plan.unattended: stop)
  78       host adapter wants another host API version
  130/143  SIGINT / SIGTERM`,
		CLIFlagDefault:    " (default %v)",
		CLIFlagDefaultStr: " (default %q)",

		CLIFlagUndefined:  "flag provided but not defined: -%s",
		CLIFlagNeedsValue: "flag needs an argument: -%s",
		CLIFlagBadSyntax:  "bad flag syntax: %s",
		CLIFlagBadValue:   "invalid value %q for flag -%s: %s",
		CLIFlagBadBool:    "invalid boolean value %q for -%s: %s",

		CLIPromptNeedsP:    "unexpected argument %q (a prompt needs -p)",
		CLIFlagNeedsP:      "--%s needs -p",
		CLIPWithMode:       "-p cannot be combined with --mode %s",
		CLIBadOutputFormat: "--output-format must be text, json or stream-json, not %q",
		CLIBadMaxTurns:     "--max-turns must be an integer of at least 1, not %d",
		CLIBadMaxCost:      "--max-cost must be a finite number of USD above 0, not %v",
		CLIDashNoStdin:     "a prompt word - (read stdin) cannot be combined with --no-stdin",
		CLIBadFrom:         "--from must be a session id (or the start of one), optionally with #n (n ≥ 1), not %q",
		CLIForkExclusive:   "--fork cannot be combined with --%s",
		CLIForkACP:         "--fork is not for --mode acp (the client opens its sessions)",

		CLISubError: "%s: %v",
		CLIUsageOf:  "Usage of %s:",
		CLIExplainUsage: `usage: ama-rpc explain [flags] < calls.jsonl
       ama-rpc explain --replay <session file or permission.log> [flags]
Reads {"tool":"bash","input":{"command":"..."}} per line and prints
{"decision":"allow|ask|deny","layer":"...","reason":"..."} per line.
--replay re-judges recorded verdicts and prints those that would change
(exit 0: none, 1: some).`,
		CLISessionsUsage: "usage: ama-rpc sessions list [--cwd dir] [--all] [--session-dir dir]",
		CLISchemaUsage: `usage: ama-rpc schema [--out DIR]
Prints the JSON Schema (draft 2020-12) of the rpc protocol's output lines.`,
		CLIUnexpectedArg: "unexpected argument %q",
		CLISchemaWrote:   "wrote %s",

		FlagKey("main", "mode"):            "protocol: rpc (stdio JSONL) or acp (Agent Client Protocol)",
		FlagKey("main", "model"):           "model as provider/id (e.g. fake/echo, openai/gpt-4.1-mini)",
		FlagKey("main", "provider"):        "provider of --model when --model has no provider/ prefix",
		FlagKey("main", "api-key"):         "API key for the provider of --model (prefer environment variables)",
		FlagKey("main", "thinking"):        "thinking level: off, minimal, low, medium, high, xhigh",
		FlagKey("main", "permission-mode"): "plan, allowlist, default, auto-edit, auto or full-auto",
		FlagKey("main", "allow"):           "allow rule such as 'bash(npm test*)' (repeatable)",
		FlagKey("main", "deny"):            "deny rule such as 'bash(terraform *)' (repeatable)",
		FlagKey("main", "tools"):           "comma-separated active tools (default %s plus host tools; ls and todo are opt-in): names replace the list, +name adds, -name removes",
		FlagKey("main", "tools-preset"):    "tool preset: default, minimal, codemode-only (or codemode) or coordinator",
		FlagKey("main", "codemode"):        "codemode tool: off, on or only (default: the preset's)",
		FlagKey("main", "no-session"):      "keep the session in memory (no session file)",
		FlagKey("main", "session"):         "open this session file",
		FlagKey("main", "resume"):          "resume the session with this id",
		FlagKey("main", "continue"):        "continue the most recent session of this directory",
		FlagKey("main", "c"):               "short for --continue",
		FlagKey("main", "session-id"):      "id of the new session (a UUID)",
		FlagKey("main", "session-dir"):     "directory of session files (default <data>/sessions)",
		FlagKey("main", "cwd"):             "working directory of the session (default: the process cwd)",
		FlagKey("main", "log-level"):       "stderr log level: debug, info, warn, error",
		FlagKey("main", "version"):         "print the version and exit",
		FlagKey("main", "host"):            `host adapter module (.mjs, .cjs or .js) run in a Node sidecar (see README "Host adapters")`,
		FlagKey("main", "host-cmd"):        "command of an out-of-process host speaking docs/host-protocol.md",
		FlagKey("main", "profile"):         "profile file (host, instructions, skillDirs, config, sessionDir, ...)",
		FlagKey("main", "agent-dir"):       "directory of sub-agent definitions (*.md; repeatable)",
		FlagKey("main", "trust"):           "trust the project: load its .ama/hooks.json and .ama/agents definitions",
		FlagKey("main", "no-trust"):        "do not trust the project (its .ama/hooks.json and .ama/agents are skipped)",
		FlagKey("main", "p"):               "print mode: run the prompt (arguments and/or piped stdin) unattended, print the result, exit",
		FlagKey("main", "print"):           "same as -p",
		FlagKey("main", "output-format"):   "with -p: text (the final answer), json (one result object) or stream-json (the events, one per line)",
		FlagKey("main", "max-turns"):       "with -p: end the run after this many model replies (exit 8)",
		FlagKey("main", "max-cost"):        "end a run once its replies cost this many USD (from the model's prices; -p exits 8)",
		FlagKey("main", "no-stdin"):        "with -p: never read stdin",
		FlagKey("main", "image"):           "with -p: attach this image file to the prompt (repeatable)",
		FlagKey("main", "from"):            "with -p: an old session's user message as the prompt, images included: id[#n] (the id or its start; n counts the file's user messages from 1, default: the last)",
		FlagKey("main", "fork"):            "start on a new copy of the session with this id (or its start), up to its current leaf",

		FlagKey("explain", "cwd"):             "project directory the calls run in (need not exist)",
		FlagKey("explain", "permission-mode"): "permission mode (default: from config, else default)",
		FlagKey("explain", "unattended"):      "nobody can answer: ask becomes deny",
		FlagKey("explain", "allow"):           "allow rule (repeatable)",
		FlagKey("explain", "deny"):            "deny rule (repeatable)",
		FlagKey("explain", "hooks"):           "hooks.json whose PreToolUse hooks run first (they are executed)",
		FlagKey("explain", "ask"):             "ask rule (repeatable)",
		FlagKey("explain", "replay"):          "re-judge the recorded verdicts of this session file or permission.log",
		FlagKey("explain", "sessions"):        "--replay of a log: where its session files are (default: the sessions directory)",
		FlagKey("explain", "candidate"):       "--replay: judge under permission.candidate",
		FlagKey("explain", "all"):             "--replay: print every record, not only the changed ones",

		FlagKey("sessions", "cwd"):         "list the sessions of this directory",
		FlagKey("sessions", "all"):         "list the sessions of every directory",
		FlagKey("sessions", "session-dir"): "directory of session files (default <data>/sessions)",

		FlagKey("schema", "out"): "directory to write %s to (default: stdout)",
	},
	Zh: {
		CLIHelpSynopsis: `  ama-rpc [参数]                     在标准输入输出上提供 --mode rpc（默认）或 --mode acp 服务
  ama-rpc -p [参数] [提示词…] [-]    打印模式：无人值守地运行一个提示词，打印结果后退出
  ama-rpc sessions list [--cwd dir] [--all] [--session-dir dir]
                                     列出已保存的会话，每行一个 JSON 对象
  ama-rpc explain [--cwd dir] [--permission-mode m] [--allow r] [--deny r] [--ask r] [--unattended]
                                     对从标准输入读到的工具调用运行权限流水线
  ama-rpc explain --replay 文件 [--candidate] [--all] [--sessions dir]
                                     重新评判记录下的裁决，打印会改变的那些
  ama-rpc schema [--out dir]         打印（或写入 dir/rpc.schema.json）协议的 JSON Schema
  ama-rpc replay --script fake.json [--mode rpc|acp] [--check expected.jsonl] < commands.jsonl
                                     回放工具：用脚本化的假模型运行服务器，输出规范化的记录
  ama-rpc help                       打印本说明`,
		CLIHelpEnvBlock: `  HOME, XDG_CONFIG_HOME, XDG_DATA_HOME   配置（~/.config/ama）和数据（~/.local/share/ama）的位置
  AMA_CONFIG_DIR, AMA_DATA_DIR           覆盖上面这两个目录
  AMA_FAKE_SCRIPT                        假模型的 JSON 脚本（见 README“Fake provider scripts”）
  AMA_FAKE_RECORD                        假模型每收到一个请求就写一行 JSON 的文件
  AMA_APPROVAL_TIMEOUT_MS                权限询问等待宿主答复的时长（默认 600000）
  AMA_STDIN_WAIT_MS                      带提示词的 -p：等待管道输入的时长（默认 2000，0：不等）
  AMA_NODE                               宿主适配器的 JavaScript 运行时（node，或设了 ELECTRON_RUN_AS_NODE 的 Electron）
  OPENAI_API_KEY, OPENAI_BASE_URL        openai 提供方的密钥和端点
  OPENROUTER_API_KEY, DEEPSEEK_API_KEY, GROQ_API_KEY, TOGETHER_API_KEY
                                         其他预设提供方的密钥
  AMA_API_KEY_<ID>                       按 id 指定任意提供方的密钥（例如 AMA_API_KEY_WORK）
  AMA_LANG                               界面语言（zh 或 en；优先于 --lang、ui.language、LC_ALL/LC_MESSAGES/LANG）`,
		CLIHelpExitBlock: `  0        标准输入结束且每个已开始的运行都已结束（--help、--version、help 也是 0）
  1        -p：运行失败（模型出错、提示词被拦截）或被中止
  2        参数错误（未知参数，--mode/--permission-mode/--thinking 的值不对，--session-id 不是 UUID，
           没有 -p 却用了打印模式的参数，-p 没有提示词，图片不可用）
  3        配置错误（配置文件无法读取或无效，cwd 不存在）
  4        没有可用的模型（未指定、未知的提供方或模型、缺少密钥）；--mode acp 改为答复 -32000
  5        会话文件缺失、损坏、被锁定或属于另一个目录
  6        宿主适配器加载或启动失败（文件缺失、加载出错、create() 失败或超时、没有 Node）
  7        -p：有工具调用被拒绝（且没有更糟的情况）
  8        -p：预算（--max-turns、--max-cost、limits.*）结束了运行
  9        -p：有计划等待批准（plan.unattended: stop）
  78       宿主适配器要求另一个宿主 API 版本
  130/143  SIGINT / SIGTERM`,
		CLIFlagDefault:    "（默认 %v）",
		CLIFlagDefaultStr: "（默认 %q）",

		CLIFlagUndefined:  "未定义的参数：-%s",
		CLIFlagNeedsValue: "参数需要一个值：-%s",
		CLIFlagBadSyntax:  "参数语法错误：%s",
		CLIFlagBadValue:   "值 %q 对参数 -%s 无效：%s",
		CLIFlagBadBool:    "布尔值 %q 对参数 -%s 无效：%s",

		CLIPromptNeedsP:    "多余的参数 %q（提示词需要 -p）",
		CLIFlagNeedsP:      "--%s 需要 -p",
		CLIPWithMode:       "-p 不能与 --mode %s 同用",
		CLIBadOutputFormat: "--output-format 只能是 text、json 或 stream-json，不能是 %q",
		CLIBadMaxTurns:     "--max-turns 必须是不小于 1 的整数，不能是 %d",
		CLIBadMaxCost:      "--max-cost 必须是大于 0 的有限美元数，不能是 %v",
		CLIDashNoStdin:     "提示词 -（读标准输入）不能与 --no-stdin 同用",
		CLIBadFrom:         "--from 应为会话 id（或它的开头），可带 #n（n ≥ 1），而不是 %q",
		CLIForkExclusive:   "--fork 不能与 --%s 同用",
		CLIForkACP:         "--fork 不用于 --mode acp（会话由客户端打开）",

		CLISubError: "%s：%v",
		CLIUsageOf:  "%s 的用法：",
		CLIExplainUsage: `用法：ama-rpc explain [参数] < calls.jsonl
      ama-rpc explain --replay <会话文件或 permission.log> [参数]
每行读入 {"tool":"bash","input":{"command":"..."}}，
每行打印 {"decision":"allow|ask|deny","layer":"...","reason":"..."}。
--replay 重新评判记录下的裁决，打印会改变的那些
（退出码 0：没有，1：有）。`,
		CLISessionsUsage: "用法：ama-rpc sessions list [--cwd dir] [--all] [--session-dir dir]",
		CLISchemaUsage: `用法：ama-rpc schema [--out DIR]
打印 rpc 协议输出行的 JSON Schema（draft 2020-12）。`,
		CLIUnexpectedArg: "多余的参数 %q",
		CLISchemaWrote:   "已写入 %s",

		FlagKey("main", "mode"):            "协议：rpc（标准输入输出 JSONL）或 acp（Agent Client Protocol）",
		FlagKey("main", "model"):           "模型，写作 提供方/id（例如 fake/echo、openai/gpt-4.1-mini）",
		FlagKey("main", "provider"):        "--model 没有 提供方/ 前缀时所用的提供方",
		FlagKey("main", "api-key"):         "--model 的提供方的 API 密钥（建议改用环境变量）",
		FlagKey("main", "thinking"):        "思考级别：off、minimal、low、medium、high、xhigh",
		FlagKey("main", "permission-mode"): "plan、allowlist、default、auto-edit、auto 或 full-auto",
		FlagKey("main", "allow"):           "允许规则，例如 'bash(npm test*)'（可重复）",
		FlagKey("main", "deny"):            "拒绝规则，例如 'bash(terraform *)'（可重复）",
		FlagKey("main", "tools"):           "逗号分隔的启用工具（默认 %s 加上宿主工具；ls 和 todo 需显式启用）：写名字替换整个列表，+name 添加，-name 移除",
		FlagKey("main", "tools-preset"):    "工具预设：default、minimal、codemode-only（或 codemode）或 coordinator",
		FlagKey("main", "codemode"):        "codemode 工具：off、on 或 only（默认取预设的）",
		FlagKey("main", "no-session"):      "会话只保存在内存中（不写会话文件）",
		FlagKey("main", "session"):         "打开这个会话文件",
		FlagKey("main", "resume"):          "恢复这个 id 的会话",
		FlagKey("main", "continue"):        "继续本目录最近的会话",
		FlagKey("main", "c"):               "--continue 的简写",
		FlagKey("main", "session-id"):      "新会话的 id（一个 UUID）",
		FlagKey("main", "session-dir"):     "会话文件的目录（默认 <data>/sessions）",
		FlagKey("main", "cwd"):             "会话的工作目录（默认：进程的当前目录）",
		FlagKey("main", "log-level"):       "标准错误的日志级别：debug、info、warn、error",
		FlagKey("main", "version"):         "打印版本号后退出",
		FlagKey("main", "host"):            "在 Node 旁路进程中运行的宿主适配器模块（.mjs、.cjs 或 .js；见 README“Host adapters”）",
		FlagKey("main", "host-cmd"):        "进程外宿主的命令，它讲 docs/host-protocol.md 的协议",
		FlagKey("main", "profile"):         "配置档文件（host、instructions、skillDirs、config、sessionDir 等）",
		FlagKey("main", "agent-dir"):       "子智能体定义的目录（*.md；可重复）",
		FlagKey("main", "trust"):           "信任本项目：加载它的 .ama/hooks.json 和 .ama/agents 定义",
		FlagKey("main", "no-trust"):        "不信任本项目（跳过它的 .ama/hooks.json 和 .ama/agents）",
		FlagKey("main", "p"):               "打印模式：无人值守地运行提示词（参数和/或管道输入），打印结果后退出",
		FlagKey("main", "print"):           "同 -p",
		FlagKey("main", "output-format"):   "配合 -p：text（最终回答）、json（一个结果对象）或 stream-json（事件，每行一个）",
		FlagKey("main", "max-turns"):       "配合 -p：模型回复这么多次后结束运行（退出码 8）",
		FlagKey("main", "max-cost"):        "一次运行的回复花费达到这么多美元时结束它（按模型价格计算；-p 退出码 8）",
		FlagKey("main", "no-stdin"):        "配合 -p：从不读取标准输入",
		FlagKey("main", "image"):           "配合 -p：把这个图片文件附加到提示词（可重复）",
		FlagKey("main", "from"):            "配合 -p：用旧会话的一条用户消息作提示词，图片一并带上：id[#n]（id 或它的开头；n 按文件里的用户消息从 1 数起，默认最后一条）",
		FlagKey("main", "fork"):            "从这个 id（或它的开头）的会话复制出一个新会话，复制到它当前的叶子为止",

		FlagKey("explain", "cwd"):             "调用所在的项目目录（不必存在）",
		FlagKey("explain", "permission-mode"): "权限模式（默认取配置，否则为 default）",
		FlagKey("explain", "unattended"):      "无人可以答复：询问变为拒绝",
		FlagKey("explain", "allow"):           "允许规则（可重复）",
		FlagKey("explain", "deny"):            "拒绝规则（可重复）",
		FlagKey("explain", "hooks"):           "先运行其中 PreToolUse 钩子的 hooks.json（钩子会被执行）",
		FlagKey("explain", "ask"):             "询问规则（可重复）",
		FlagKey("explain", "replay"):          "重新评判此会话文件或 permission.log 中记录的裁决",
		FlagKey("explain", "sessions"):        "对日志 --replay 时其会话文件所在目录（默认：会话目录）",
		FlagKey("explain", "candidate"):       "--replay：按 permission.candidate 评判",
		FlagKey("explain", "all"):             "--replay：打印每条记录，而不只是会改变的",

		FlagKey("sessions", "cwd"):         "列出这个目录的会话",
		FlagKey("sessions", "all"):         "列出所有目录的会话",
		FlagKey("sessions", "session-dir"): "会话文件的目录（默认 <data>/sessions）",

		FlagKey("schema", "out"): "把 %s 写入这个目录（默认：标准输出）",
	},
}

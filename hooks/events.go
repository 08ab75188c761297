package hooks

// Event is a hook event name.
type Event string

// The hook events (spec §2).
const (
	SessionStart     Event = "SessionStart"
	UserPromptSubmit Event = "UserPromptSubmit"
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	Stop             Event = "Stop"
	// SubagentStop fires where Stop does, inside a task sub-session
	// (depth > 0): session.stopHook picks it for a child session.
	SubagentStop Event = "SubagentStop"
	PreCompact   Event = "PreCompact"
	Notification Event = "Notification"
	SessionEnd   Event = "SessionEnd"
	PostRewind   Event = "PostRewind"
	PostCompact  Event = "PostCompact"
)

// Events lists the events in flattening order (inside one layer).
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SubagentStop, PreCompact,
	Notification, SessionEnd, PostRewind, PostCompact}

const numEvents = 11

func eventIndex(e Event) int {
	for i, x := range Events {
		if x == e {
			return i
		}
	}
	return -1
}

// Decision is a hook decision.
type Decision string

// Decisions, by severity: Deny > Block > Ask > Allow.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Block Decision = "block"
	Deny  Decision = "deny"
)

func severity(d Decision) int {
	switch d {
	case Deny:
		return 4
	case Block:
		return 3
	case Ask:
		return 2
	case Allow:
		return 1
	}
	return 0
}

// accepted maps a raw decision to the one the event understands (after the
// deny/block swap), or "" when the event ignores it.
func accepted(e Event, d Decision) Decision {
	switch e {
	case PreToolUse:
		switch d {
		case Allow, Ask, Deny:
			return d
		case Block:
			return Deny
		}
	case SessionStart, UserPromptSubmit, PostToolUse, Stop, SubagentStop, PreCompact:
		if d == Block || d == Deny {
			return Block
		}
	}
	return ""
}

// blocking is the decision exit code 2 stands for ("" = ignored).
func blocking(e Event) Decision {
	switch e {
	case PreToolUse:
		return Deny
	case Notification, SessionEnd, PostRewind, PostCompact:
		return ""
	}
	return Block
}

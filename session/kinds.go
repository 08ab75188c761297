package session

// PromptKind is the command a prompt arrives as (Session.Prompt). Its
// values are the native command names, so the native wire converts the
// command type directly.
type PromptKind string

// Prompt kinds.
const (
	// KindPrompt starts a run, or is queued by PromptInput.StreamingBehavior.
	KindPrompt PromptKind = "prompt"
	// KindSteer queues a steering message (whatever StreamingBehavior says).
	KindSteer PromptKind = "steer"
	// KindFollowUp queues a follow-up message.
	KindFollowUp PromptKind = "follow_up"
)

// Queue names one of the two message queues of an active run. Its values
// are those of a prompt's streamingBehavior; the empty Queue means "none".
type Queue string

// Queues.
const (
	// QueueSteer holds steering messages, delivered after the current
	// tool calls.
	QueueSteer Queue = "steer"
	// QueueFollowUp holds follow-up messages, delivered when the run
	// would end.
	QueueFollowUp Queue = "followUp"
)

// Valid reports whether q is a queue name or empty.
func (q Queue) Valid() bool { return q == "" || q == QueueSteer || q == QueueFollowUp }

// QueueMode is how many queued messages a queue delivers at a time.
type QueueMode string

// Queue modes.
const (
	OneAtATime QueueMode = "one-at-a-time"
	DeliverAll QueueMode = "all"
)

// Valid reports whether m is a queue mode.
func (m QueueMode) Valid() bool { return m == OneAtATime || m == DeliverAll }

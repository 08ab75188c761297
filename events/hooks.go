package events

// HookExecuted reports one finished command hook. ExitCode is nil when the
// hook timed out or was killed by a signal.
type HookExecuted struct {
	Event      string `json:"event"`
	Command    string `json:"command"`
	ExitCode   *int   `json:"exitCode"`
	DurationMs int64  `json:"durationMs"`
}

// Type implements Event.
func (HookExecuted) Type() string { return "hook_executed" }

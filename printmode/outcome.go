package printmode

// Outcome is how a print run ended, in the result object and the exit code.
type Outcome string

// The outcomes.
const (
	Completed    Outcome = "completed"
	Denied       Outcome = "denied"
	LimitReached Outcome = "limit_reached"
	PlanPending  Outcome = "plan_pending"
	Failed       Outcome = "failed"
	Aborted      Outcome = "aborted"
)

// The exit codes of print mode (the others are app's: 2 usage, 3 config,
// 4 model, 5 session, 6 host/hook, 78 host API).
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitToolDenied  = 7
	ExitLimit       = 8
	ExitPlanPending = 9
)

// Facts are what the run left behind, as Decide needs them.
type Facts struct {
	// Signal is 130 or 143 when SIGINT/SIGTERM ended the run (0: none).
	Signal int
	// Broken is a closed stdout (the reader went away, `| head`).
	Broken bool
	// Thrown is the prompt's own failure (a blocked prompt, a closed
	// session): no run happened.
	Thrown error
	// Limit is set when a budget ended the run.
	Limit bool
	// LastStop is the stop reason of the last assistant message.
	LastStop string
	// Denials counts the denied tool calls.
	Denials int
	// Plan is set when a proposed plan still awaits approval.
	Plan bool
}

// Decide maps the facts to the outcome and the exit code. The order is
// ama's (print-mode.md §10): a signal, a closed stdout, a thrown failure,
// a budget, a failed or aborted last reply, a pending plan, denials. Beyond
// ama, a closed stdout exits 0 only when no call was denied: a run with a
// denied call never exits 0.
func Decide(f Facts) (Outcome, int) {
	switch {
	case f.Signal != 0:
		return Aborted, f.Signal
	case f.Broken && f.Denials > 0:
		return Aborted, ExitToolDenied
	case f.Broken:
		return Aborted, ExitOK
	case f.Thrown != nil:
		return Failed, ExitFailed
	case f.Limit:
		return LimitReached, ExitLimit
	case f.LastStop == "error":
		return Failed, ExitFailed
	case f.LastStop == "aborted":
		return Aborted, ExitFailed
	case f.Plan:
		return PlanPending, ExitPlanPending
	case f.Denials > 0:
		return Denied, ExitToolDenied
	}
	return Completed, ExitOK
}

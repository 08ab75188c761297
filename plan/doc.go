// Package plan holds the plan-mode model of ama: extracting a
// <proposed_plan> block from an assistant reply, parsing its steps, the
// PlanData snapshots and their versions, the todo list derived from an
// approved plan (with its allowed status transitions and the operations of
// the todo tool), the [DONE:<step id>] progress convention, and the texts
// injected into the conversation while planning and at hand-off.
//
// The package is pure: no I/O, no goroutines, no logging, no clocks and no
// random ids. Callers (the session actor) decide when to call it, write the
// resulting entries and emit the events. Everything here works on values;
// functions never modify their arguments and returned slices are fresh
// copies, so the package is safe for concurrent use.
//
// Slices that the protocol shows as arrays (Plan.Steps, TodoList.Items and
// the results of ParseSteps, TodosFromSteps, Set, Update and ApplyDone) are
// never encoded as null.
//
// # Todo status transitions
//
// The todo tool's update action (Update) and the [DONE:...] convention
// (ApplyDone) follow this table; a status may always be "changed" to
// itself:
//
//	pending     -> in_progress, done
//	in_progress -> done, pending
//	done        -> (none)
//
// Skipping in_progress (pending -> done) is allowed because short steps are
// often finished in one go; in_progress -> pending lets the model put a step
// back when it switches focus. done is final for Update: reopening a step is
// an explicit act done with Set, which replaces the whole list and is not
// checked against the previous one. Several items may be in_progress at
// once (steps handed to parallel sub-agents); the list builders
// (TodosFromSteps, ApplyDone) still keep exactly one in progress.
//
// Texts: every text except ApprovedUserText is written for this package;
// only their structure (which parts appear, in which order, and the
// literal tags, markers and labels) is part of the protocol.
package plan

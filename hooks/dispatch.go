package hooks

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/armadra/ama-rpc/internal/childenv"
)

// Dispatcher runs the hooks of a Set. A nil Dispatcher has no hooks.
type Dispatcher struct {
	set     *Set
	timeout time.Duration
	env     []string
	// observer sees every finished Run (host adapters' hook_executed);
	// set once at startup, before the first Run.
	observer func(Event, []Outcome)
}

// SetObserver makes fn see the outcomes of every Run that ran a hook, in
// configuration order, once all of them finished (the dispatcher's
// onExecuted: host adapters get hook_executed from here, also for the
// SessionStart/SessionEnd runs no session publishes). Call it before the
// first Run; fn runs on the caller's goroutine and must not block. A nil
// dispatcher ignores it.
func (d *Dispatcher) SetObserver(fn func(Event, []Outcome)) {
	if d != nil {
		d.observer = fn
	}
}

// Options configure a Dispatcher.
type Options struct {
	// Timeout is the default per-command timeout (config hooks.timeoutMs;
	// zero: DefaultTimeout).
	Timeout time.Duration
	// Env is the base environment of hooks (nil: this process's
	// environment scrubbed by internal/childenv, as for the bash tool).
	Env []string
}

// NewDispatcher returns a dispatcher for set, or nil when set is empty
// (so that callers with no hooks pay nothing).
func NewDispatcher(set *Set, o Options) *Dispatcher {
	if set.Len() == 0 {
		return nil
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Env == nil {
		o.Env = childenv.Environ(childenv.Policy{})
	}
	return &Dispatcher{set: set, timeout: o.Timeout, env: o.Env}
}

// Has reports whether any hook is configured for e.
func (d *Dispatcher) Has(e Event) bool {
	return d != nil && len(d.set.Commands(e)) > 0
}

// MayMatch reports whether a hook of e could match tool (name only).
func (d *Dispatcher) MayMatch(e Event, tool string) bool {
	if d == nil {
		return false
	}
	for _, c := range d.set.Commands(e) {
		if c.Matcher.MayMatch(tool) {
			return true
		}
	}
	return false
}

// Call is one event occurrence.
type Call struct {
	Event   Event
	Common  Common
	Payload any
	// Tool and Input select tool-event hooks and fill AMA_TOOL_NAME and
	// AMA_FILE.
	Tool  string
	Input json.RawMessage
}

// Run runs every matching hook of c.Event in parallel and merges their
// outcomes in configuration order. It returns nil when no hook matched.
// ctx ending kills the running hooks (SIGTERM, then SIGKILL).
func (d *Dispatcher) Run(ctx context.Context, c Call) *Result {
	if d == nil {
		return nil
	}
	var cmds []*Command
	tool := c.Event == PreToolUse || c.Event == PostToolUse
	for _, cmd := range d.set.Commands(c.Event) {
		if !tool || cmd.Matcher.Match(c.Tool, c.Input) {
			cmds = append(cmds, cmd)
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	stdin, err := BuildInput(c.Event, c.Common, c.Payload)
	if err != nil {
		return &Result{Output: Output{Warnings: []string{err.Error()}}}
	}
	env := Env(d.env, c.Event, c.Common, c.Tool, c.Input)
	outs := make([]Outcome, len(cmds))
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := cmd.Timeout(d.timeout)
			p := Run(ctx, Spec{Command: cmd.Command, Dir: c.Common.Cwd, Env: env, Stdin: stdin, Timeout: t})
			outs[i] = Interpret(c.Event, cmd, p, t)
		}()
	}
	wg.Wait()
	if d.observer != nil {
		d.observer(c.Event, outs)
	}
	return Merge(outs)
}

package printmode

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/agents"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/rpc"
	"github.com/armadra/ama-rpc/session"
)

// The output formats.
const (
	FormatText       = "text"
	FormatJSON       = "json"
	FormatStreamJSON = "stream-json"
)

// Config is one print run.
type Config struct {
	// Session is the startup session (not started yet); StartReason is
	// its session_start reason.
	Session     *session.Session
	StartReason string
	Format      string
	Prompt      string
	Images      []*llm.ImageContent
	Stdout      io.Writer
	Stderr      io.Writer
	Log         *zap.Logger
	// Writer bounds the stdout queue (zero: defaults).
	Writer stdio.WriterOptions
	// Now is the clock of durationMs (nil: time.Now).
	Now func() time.Time
	// Signal reports 130/143 when ctx was ended by SIGINT/SIGTERM.
	Signal func(ctx context.Context) (int, bool)
	// AbortWait bounds the wait for an aborted run to settle (zero: 10 s).
	AbortWait time.Duration
	// Lang is the language of the stderr lines ("": English).
	Lang i18n.Lang
	// Preset is the run's tool preset (the search hint; "": default).
	Preset string
}

// Run starts the session, runs the prompt unattended, waits for the run,
// background tasks and their notification turns, writes the output and
// returns the exit code. The caller closes the session.
func Run(ctx context.Context, c Config) int {
	now := c.Now
	if now == nil {
		now = time.Now
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	start := now()
	s := c.Session
	col := newCollector()
	if c.Format != FormatStreamJSON {
		col.progress = func(e events.Event) {
			if r, ok := e.(events.AutoRetryStart); ok {
				fmt.Fprintln(c.Stderr, i18n.T(c.Lang, i18n.PrintRetry, r.Attempt, r.MaxAttempts, (r.DelayMs+500)/1000, r.ErrorMessage))
			}
		}
	}
	defer s.Subscribe(col.note)()
	// A run has settled once every subscriber saw its agent_settled.
	defer s.OnSettle(func(session.Outcome) { col.settled() })()
	w := rpc.EventWriter(c.Stdout, c.Writer)
	if err := s.Start(c.StartReason); err != nil {
		w.Close()
		fmt.Fprintf(c.Stderr, "ama: %v\n", err)
		return ExitFailed
	}
	unsubStream := func() {}
	if c.Format == FormatStreamJSON {
		// After Start: like ama, the stream begins with the prompt's run.
		sink := rpc.EventSink(w, c.Log)
		var ended atomic.Bool // the last run settled: its agent_settled is the last line
		unsubStream = s.Subscribe(func(e events.Event) {
			if _, ok := e.(events.Notification); ok || ended.Load() {
				return // human text: never on stdout in -p
			}
			sink(e)
			if _, ok := e.(events.AgentSettled); ok {
				if sn := col.snap(); sn.running == 0 && sn.owed == 0 {
					ended.Store(true) // no task runs, no notification turn is owed
				}
			}
		})
	}

	var f Facts
	stop := ""
	reply := make(chan error, 1)
	s.Prompt(session.KindPrompt, session.PromptInput{Message: c.Prompt, Images: c.Images}, func(d session.Disposition, err error) {
		if err == nil && d != session.Started {
			col.settled() // handled at once (a slash command): no run
		}
		reply <- err
	})
	select {
	case err := <-reply:
		f.Thrown = err
	case <-ctx.Done():
		stop = "signal"
	case <-w.Broken():
		stop = "broken"
	}
	if stop == "" && f.Thrown == nil {
		stop = col.wait(ctx, w, func(sn snapshot) bool { return sn.settles >= 1 && !sn.active })
	}
	if sn := col.snap(); stop == "" && f.Thrown == nil && sn.limit == nil && !failed(sn.last) {
		stop = waitBackground(ctx, w, col, s, c.Stderr, c.Lang)
	}
	if stop != "" {
		abort(s, c.AbortWait, c.Log)
	}
	if stop == "signal" && c.Signal != nil {
		f.Signal, _ = c.Signal(ctx)
	}
	if stop == "signal" && f.Signal == 0 {
		f.Signal = 130
	}
	f.Broken = stop == "broken"
	sn := col.snap()
	f.Limit, f.Plan, f.Denials = sn.limit != nil, sn.plan != nil, len(sn.denials)
	if sn.last != nil {
		f.LastStop = sn.last.StopReason
	}
	outcome, code := Decide(f)
	res := buildResult(s, sn, f, outcome, now().Sub(start))
	unsubStream() // waits for an event being written: nothing is enqueued after Close
	switch c.Format {
	case FormatJSON:
		if line, err := stdio.Marshal(res); err == nil {
			w.SendLine(line)
		} else {
			c.Log.Error("encode the result", zap.Error(err))
		}
	case FormatText:
		if t := finalText(sn.last); t != "" {
			w.SendLine([]byte(t))
		}
	}
	w.Close()
	explain(c.Stderr, f, sn, res, c.Lang, func(w io.Writer) { searchHint(w, c.Preset, activeTools(s), sn.deniedBash, c.Lang) })
	return code
}

// activeTools are the names of the session's active tools.
func activeTools(s *session.Session) []string {
	infos, _ := s.Tools()
	var out []string
	for _, t := range infos {
		if t.Active {
			out = append(out, t.Decl.Name)
		}
	}
	return out
}

// failed reports a last reply that ended in an error or an abort.
func failed(m *llm.AssistantMessage) bool {
	return m != nil && (m.StopReason == llm.StopError || m.StopReason == llm.StopAborted)
}

// wait blocks until done holds, ctx ends ("signal") or stdout breaks
// ("broken").
func (c *collector) wait(ctx context.Context, w *stdio.Writer, done func(snapshot) bool) string {
	for {
		if done(c.snap()) {
			return ""
		}
		select {
		case <-c.poke:
		case <-ctx.Done():
			return "signal"
		case <-w.Broken():
			return "broken"
		}
	}
}

// settled counts a settled run (OnSettle, after every subscriber saw
// agent_settled).
func (c *collector) settled() {
	c.mu.Lock()
	c.active = false
	c.settles++
	c.mu.Unlock()
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

// waitBackground waits until no task runs, every finished background
// task's notification turn has run and the session is idle (ama waits the
// same way before printing, print-mode.md §7).
func waitBackground(ctx context.Context, w *stdio.Writer, col *collector, s *session.Session, stderr io.Writer, lang i18n.Lang) string {
	quiet := func(sn snapshot) bool { return sn.running == 0 && sn.owed == 0 && !sn.active && runningTasks(s) == 0 }
	if sn := col.snap(); !quiet(sn) {
		if n := max(sn.running, runningTasks(s)); n > 0 {
			line := i18n.T(lang, i18n.PrintWaitTaskOne)
			if n > 1 {
				line = i18n.T(lang, i18n.PrintWaitTasksMany, n)
			}
			fmt.Fprintln(stderr, line)
		}
	}
	return col.wait(ctx, w, quiet)
}

// runningTasks counts the session's running tasks.
func runningTasks(s *session.Session) int {
	reg := s.Tasks()
	if reg == nil {
		return 0
	}
	n := 0
	for _, t := range reg.List() {
		if t.Status == agents.StatusRunning {
			n++
		}
	}
	return n
}

// abort ends the active run and waits (bounded) until it has settled.
func abort(s *session.Session, bound time.Duration, log *zap.Logger) {
	if bound <= 0 {
		bound = 10 * time.Second
	}
	done := make(chan struct{})
	s.Abort(func() { close(done) })
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		log.Warn("the aborted run did not settle in time")
	}
}

var leadingBlank = regexp.MustCompile(`^\s*\n`)

// finalText is the text format's output: the last reply's text without
// its leading blank lines (the first content line keeps its indentation)
// and with a final newline; nothing for a failed reply or white space.
func finalText(m *llm.AssistantMessage) string {
	if m == nil || m.StopReason == llm.StopError {
		return ""
	}
	t := m.Text("")
	if strings.TrimSpace(t) == "" {
		return ""
	}
	t = leadingBlank.ReplaceAllString(t, "")
	if !strings.HasSuffix(t, "\n") {
		t += "\n"
	}
	return t
}

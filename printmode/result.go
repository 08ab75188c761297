package printmode

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/armadra/ama-rpc/agents"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/telemetry"
)

// Result is the json format's one line. The keys follow ama's result
// (print-mode.md §4.2); outcome, exitCode, turns, durationMs and denials
// are ama-rpc's own.
type Result struct {
	Type            string                `json:"type"`
	Outcome         Outcome               `json:"outcome"`
	ExitCode        int                   `json:"exitCode"`
	SessionID       string                `json:"sessionId"`
	SessionFile     string                `json:"sessionFile,omitempty"`
	Model           *llm.ModelRef         `json:"model,omitempty"`
	StopReason      string                `json:"stopReason"`
	Text            string                `json:"text"`
	Error           string                `json:"error,omitempty"`
	Usage           session.TokenTotals   `json:"usage"`
	Cost            *float64              `json:"cost,omitempty"`
	CacheHitRate    *float64              `json:"cacheHitRate,omitempty"`
	Cache           *telemetry.CacheStats `json:"cache,omitempty"`
	Turns           int                   `json:"turns"`
	DurationMs      int64                 `json:"durationMs"`
	Tasks           *TaskSummary          `json:"tasks,omitempty"`
	DeniedTools     []DeniedTool          `json:"deniedTools,omitempty"`
	Denials         []Denial              `json:"denials,omitempty"`
	PlanPending     *PendingPlan          `json:"planPending,omitempty"`
	LimitReached    *events.LimitReached  `json:"limitReached,omitempty"`
	MaxTurnsReached bool                  `json:"maxTurnsReached,omitempty"`
	Entries         json.RawMessage       `json:"entries"`
}

// TaskSummary counts the session's sub-agent tasks.
type TaskSummary struct {
	Total    int            `json:"total"`
	Running  int            `json:"running"`
	ByStatus map[string]int `json:"byStatus"`
}

// DeniedTool is ama's denied-call record.
type DeniedTool struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Reason     string `json:"reason"`
}

// PendingPlan is a proposed plan nobody approved.
type PendingPlan struct {
	PlanID   string `json:"planId"`
	Version  int    `json:"version"`
	FilePath string `json:"filePath,omitempty"`
}

func buildResult(s *session.Session, sn snapshot, f Facts, outcome Outcome, took time.Duration) *Result {
	_, code := Decide(f)
	r := &Result{Type: "result", Outcome: outcome, ExitCode: code, SessionID: s.ID(), StopReason: llm.StopStop,
		Turns: sn.turns, DurationMs: took.Milliseconds(), Denials: sn.denials, LimitReached: sn.limit}
	if st, err := s.State(); err == nil {
		r.SessionFile, r.Model = st.SessionFile, st.Model
	}
	if m := sn.last; m != nil {
		r.StopReason, r.Text, r.Error = m.StopReason, m.Text(""), m.ErrorMessage
	}
	if f.Thrown != nil {
		r.StopReason, r.Error = llm.StopError, f.Thrown.Error()
	}
	if stats, err := s.Stats(); err == nil {
		r.Usage, r.Cost, r.CacheHitRate, r.Cache = stats.Tokens, stats.Cost, stats.CacheHitRate, stats.Cache
	}
	if reg := s.Tasks(); reg != nil {
		if infos := reg.List(); len(infos) > 0 {
			t := &TaskSummary{Total: len(infos), ByStatus: map[string]int{}}
			for _, i := range infos {
				t.ByStatus[i.Status]++
			}
			t.Running = t.ByStatus[agents.StatusRunning]
			r.Tasks = t
		}
	}
	for _, d := range sn.denials {
		r.DeniedTools = append(r.DeniedTools, DeniedTool{ToolCallID: d.ToolCallID, ToolName: d.Tool, Reason: d.Reason})
	}
	if p := sn.plan; p != nil {
		r.PlanPending = &PendingPlan{PlanID: p.PlanID, Version: p.Version, FilePath: p.FilePath}
	}
	r.MaxTurnsReached = sn.limit != nil && sn.limit.Kind == events.LimitTurns
	r.Entries = json.RawMessage("[]")
	if entries, _, err := s.Entries(""); err == nil && len(entries) > 0 {
		buf := []byte{'['}
		for i, e := range entries {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = e.AppendJSON(buf)
		}
		r.Entries = append(buf, ']')
	}
	return r
}

// explain writes the stderr lines of the end of a run, in the order of
// Decide: what failed, the denied calls (and hint's line after them), the
// budget, the pending plan.
func explain(w io.Writer, f Facts, sn snapshot, r *Result, lang i18n.Lang, hint func(io.Writer)) {
	denied := func() {
		if len(sn.denials) > 0 {
			deniedLine(w, sn.denials, lang)
			hint(w)
		}
	}
	switch {
	case f.Signal != 0 || f.Broken:
		return
	case f.Thrown != nil:
		fmt.Fprintf(w, "ama: %v\n", f.Thrown)
		return
	case f.Limit:
		denied()
		limitLine(w, sn.limit, lang)
		return
	case failed(sn.last):
		msg := sn.last.ErrorMessage
		if msg == "" && sn.last.StopReason == llm.StopAborted {
			msg = i18n.T(lang, i18n.PrintAborted)
		}
		if msg == "" {
			msg = i18n.T(lang, i18n.PrintModelFailed)
		}
		fmt.Fprintf(w, "ama: %s\n", msg)
		return
	}
	denied()
	if p := r.PlanPending; p != nil {
		where := p.FilePath
		if where == "" {
			where = p.PlanID
		}
		fmt.Fprintln(w, i18n.T(lang, i18n.PrintPlanPending, p.Version, where))
	}
}

// deniedLine is ama's one line about the denied calls: how many, per tool,
// the first reason, and how to let them run.
func deniedLine(w io.Writer, ds []Denial, lang i18n.Lang) {
	if len(ds) == 0 {
		return
	}
	count := map[string]int{}
	var order []string
	for _, d := range ds {
		if count[d.Tool] == 0 {
			order = append(order, d.Tool)
		}
		count[d.Tool]++
	}
	parts := make([]string, len(order))
	for i, t := range order {
		parts[i] = fmt.Sprintf("%s ×%d", t, count[t])
	}
	var line string
	if len(ds) == 1 {
		line = i18n.T(lang, i18n.PrintDeniedOne, strings.Join(parts, ", "))
	} else {
		line = i18n.T(lang, i18n.PrintDeniedMany, len(ds), strings.Join(parts, ", "))
	}
	if ds[0].Reason != "" {
		line += i18n.T(lang, i18n.PrintDeniedReason, ds[0].Reason)
	}
	fmt.Fprintln(w, i18n.T(lang, i18n.PrintDeniedHint, line))
}

func limitLine(w io.Writer, l *events.LimitReached, lang i18n.Lang) {
	if l == nil {
		return
	}
	if l.Kind == events.LimitTurns {
		fmt.Fprintln(w, i18n.T(lang, i18n.PrintTurnLimit, int(l.Limit)))
		return
	}
	fmt.Fprintln(w, i18n.T(lang, i18n.PrintCostLimit, usd(l.Limit), usd(l.Value)))
}

// usd is ama's amount: 4 decimals below $1, else 2.
func usd(v float64) string {
	if v < 1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/tools"
)

// Gate modes (Settings.PermissionGate).
const (
	GateOff     = "off"
	GateShadow  = "shadow"
	GateEnforce = "enforce"
)

// permTally is a session's view of its permission decisions: the
// counters, the repeated-rejection tracker and the recent denials. Each
// part is safe for concurrent use (parallel and nested calls).
type permTally struct {
	counts    permlog.Counters
	rejects   permlog.Rejections
	recent    permlog.Recent
	logWarned atomic.Bool // the log failure was announced
	// pending are the records since the last reply's trace entry, which
	// takes them (turns → afterTurn): the records in the session file.
	pending permlog.Pending
}

// defaultMaxRejections is Settings.MaxRejections' default.
const defaultMaxRejections = 3

// maxShapePrograms bounds the program names of one record.
const maxShapePrograms = 16

// wallNow is the clock of decision records (their time, the classifier's
// latency, the person's wait): Deps.Clock, the wall clock telemetry reads,
// so records never move the session's own clock (Deps.Now, which tests
// step per reading).
func (s *Session) wallNow() time.Time {
	if c := s.deps.Clock; c != nil {
		return c()
	}
	return time.Now()
}

// gateName is the session's gate mode.
func (s *Session) gateName() string {
	switch g := s.deps.Settings.PermissionGate; g {
	case GateOff, GateShadow:
		return g
	}
	return GateEnforce
}

// newRecord starts the record of p's verdict: ids, mode and shape.
// class is the call's permission class ("": derive it from the tool).
func (s *Session) newRecord(r *runState, env *toolEnv, p *preparedCall, class string) *permlog.Record {
	tc := p.call
	rec := &permlog.Record{V: permlog.Version, Time: permlog.Stamp(s.wallNow()), SessionID: s.id,
		ToolCallID: tc.ID, ParentToolCallID: p.parent, TaskID: s.taskID,
		Mode: string(env.policy.policy.Mode), Gate: s.gateName(), Unattended: env.policy.policy.Unattended}
	if r != nil {
		rec.Turn = r.turns + 1 // r.turns counts the finished turns of the run
	}
	if s.parent {
		rec.Depth = 1
	}
	if class == "" && p.tool != nil {
		class = string(tools.PermissionOf(p.tool, tc.Arguments))
	}
	rec.Shape = shapeOf(tc.Name, class, p.res, env.policy.policy.Private)
	return rec
}

// shapeOf is the shape of a call's interpretation: never its text.
func shapeOf(name, class string, res *tools.Resolved, private []string) permlog.Shape {
	sh := permlog.Shape{Tool: permlog.ToolClass(name), Class: class}
	if res == nil {
		return sh
	}
	root, home := res.RealRoot, res.RealHome
	if res.HasPath {
		c := permlog.PathUnresolved
		if res.Err == nil {
			c = permlog.PathClass(res.Real, root, home, private)
		}
		sh.Paths = permlog.AddUnique(sh.Paths, c)
	}
	if a := res.Shell; a != nil {
		sh.Unparsed, sh.Subst, sh.Compound, sh.Layers = a.Err != nil, a.Subst, a.Compound, a.Depth
		for i := range a.Segments {
			if len(sh.Programs) == maxShapePrograms {
				break
			}
			sh.Programs = permlog.AddUnique(sh.Programs, permlog.Program(a.Segments[i].Name))
		}
		for _, list := range [][]approvals.Target{a.Writes, a.Deletes, a.Inputs} {
			for _, t := range list {
				c := permlog.PathDynamic
				if !t.Dynamic {
					c = permlog.PathClass(t.Path, root, home, private)
				}
				sh.Paths = permlog.AddUnique(sh.Paths, c)
			}
		}
	}
	return sh
}

// RuleVote is the approvals pipeline's vote on a call: the first vote of
// its decision record (`explain --replay` compares it).
func RuleVote(v approvals.Verdict) permlog.Vote {
	vote := permlog.Vote{Layer: "rule", Vote: string(v.Decision), Step: v.Layer, Rule: v.Rule, Categories: v.Dangerous}
	if v.Sandboxed {
		vote.Layer = "sandbox"
	}
	if v.Classify {
		vote.Vote = "classify"
	}
	return vote
}

// record finishes rec: the rejection count of a deny, the log, the
// counters, the recent denials and the permission_decision event. With
// strict set (an allow nobody confirmed, gate enforce) a log failure
// returns the error before anything is counted, so the caller can ask a
// person and record once; otherwise a log failure is only reported.
func (s *Session) record(rec *permlog.Record, tc *llm.ToolCall, strict bool) error {
	if rec.Effect != "allow" {
		rec.Rejections = s.perm.rejects.Reject(rejectKey(tc))
	}
	err := s.deps.Decisions.Append(rec)
	if err != nil {
		if s.perm.logWarned.CompareAndSwap(false, true) {
			s.log.Error("permission decision log", zap.Error(err))
			msg, key := "The permission decision log cannot be written; decisions go on unlogged.", "notice.decisionLog.unlogged"
			if s.gateName() == GateEnforce {
				msg, key = "The permission decision log cannot be written; calls that would run without a person are asked until it can.", "notice.decisionLog.asked"
			}
			s.publish(events.Notification{Level: "error", Message: msg, Err: err, Key: key})
		}
		if strict {
			return err
		}
	}
	s.perm.counts.Add(rec)
	s.perm.recent.Add(rec)
	s.perm.pending.Add(rec)
	s.publish(events.PermissionDecision{Record: rec})
	return nil
}

// rejectKey is the equivalence key of an action: the tool and its
// arguments with insignificant white space removed. Rejections hashes it.
func rejectKey(tc *llm.ToolCall) string {
	var b bytes.Buffer
	b.WriteString(tc.Name)
	b.WriteByte(0)
	if json.Compact(&b, tc.Arguments) != nil {
		b.Write(tc.Arguments)
	}
	return b.String()
}

// rejectText is the model's text for a deny: text, and once the action
// was refused MaxRejections times, the instruction to stop retrying it.
func (s *Session) rejectText(text string, rec *permlog.Record) string {
	limit := s.deps.Settings.MaxRejections
	if limit <= 0 {
		limit = defaultMaxRejections
	}
	if rec.Rejections < limit {
		return text
	}
	return fmt.Sprintf("%s\n\nThis exact action has been refused %d times in this session. Do not retry it: "+
		"take a different approach, or ask the user to change the permission settings.", text, rec.Rejections)
}

// PermissionCounts are the session's decision counters.
func (s *Session) PermissionCounts() permlog.Counts { return s.perm.counts.Snapshot() }

// RecentDenials are the session's last denials (metadata only).
func (s *Session) RecentDenials() []permlog.Denial { return s.perm.recent.List() }

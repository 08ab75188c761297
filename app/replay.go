package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/internal/secrets"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/tools"
	"github.com/armadra/ama-rpc/trace"
)

// maxReplayLog bounds the decision log `explain --replay` reads.
const maxReplayLog = 1 << 30

// Reasons a record is not re-judged (replaySummary.Skipped keys).
const (
	skipHook      = "hook"       // a PreToolUse hook denied it before the pipeline ran
	skipNoCall    = "no_call"    // its call is not in the session file (a nested call, a hook's rewrite)
	skipNoSession = "no_session" // the session file of a logged record was not found or not readable
	skipMode      = "mode"       // the record's mode is not one ama-rpc knows
)

// replayOptions are the flags of `explain --replay`.
type replayOptions struct {
	file       string
	sessions   string // where logged records' session files are looked for
	mode       string // judge every call in this mode ("": the record's)
	unattended bool   // judge as if nobody could answer
	candidate  bool   // judge under permission.candidate
	all        bool   // print every record, not only the changed ones
	layer      approvals.Layer
}

// replaySide is one verdict of a replay line.
type replaySide struct {
	// Vote is the pipeline's vote: allow, ask, deny or classify (auto
	// mode would ask its classifier; explain never does).
	Vote string `json:"vote"`
	Step string `json:"step,omitempty"`
	Rule string `json:"rule,omitempty"`
	// Effect and Code are what happened (recorded side only).
	Effect string `json:"effect,omitempty"`
	Code   string `json:"code,omitempty"`
	// Reason is the pipeline's reason (replayed side only).
	Reason string `json:"reason,omitempty"`
}

// replayLine is one output line of `explain --replay`.
type replayLine struct {
	SessionID  string      `json:"sessionId"`
	ToolCallID string      `json:"toolCallId"`
	Turn       int         `json:"turn,omitempty"`
	Time       string      `json:"time,omitempty"`
	Tool       string      `json:"tool"`
	Mode       string      `json:"mode"`
	Changed    bool        `json:"changed"`
	Skipped    string      `json:"skipped,omitempty"`
	Recorded   *replaySide `json:"recorded,omitempty"`
	Replayed   *replaySide `json:"replayed,omitempty"`
}

// replaySummary is the last output line.
type replaySummary struct {
	Records   int            `json:"records"`
	Replayed  int            `json:"replayed"`
	Unchanged int            `json:"unchanged"`
	Changed   int            `json:"changed"`
	Skipped   map[string]int `json:"skipped"`
	BadLines  int            `json:"badLines,omitempty"`
}

// replayCall is a recorded verdict and the call it judged (args nil: not
// found).
type replayCall struct {
	rec  *permlog.Record
	name string // the call's tool name in the session file (the record's may be "other")
	args json.RawMessage
}

// replaySession is one session's records in order, with its cwd.
type replaySession struct {
	id, cwd string
	calls   []replayCall
	missing bool // the session file was not found (log input)
}

// errReplayInput marks an input file that is missing, unreadable or
// neither a session file nor a decision log (exit 5).
var errReplayInput = errors.New("replay input")

// policyFor builds the policy calls of a session in cwd are judged with:
// user and project config as the server reads them, the command-line
// layer, the candidate when asked for (or when gate enforce makes it the
// deciding policy, as in the server). Nothing is written.
type replayPolicies struct {
	env      Env
	paths    config.Paths
	user     *config.Config
	sessions string
	opts     replayOptions
	cache    map[string]*replayPolicy
}

type replayPolicy struct {
	pol       *approvals.Policy
	candidate *approvals.Policy // the deciding candidate (nil: none)
}

func (rp *replayPolicies) get(cwd string) (*replayPolicy, error) {
	if p, ok := rp.cache[cwd]; ok {
		return p, nil
	}
	project, err := config.Load(config.ProjectFile(cwd))
	if err != nil {
		return nil, err
	}
	pol, _, err := approvals.BuildPolicy(permissionLayer(rp.user), permissionLayer(project), rp.opts.layer)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	log := newLogger(io.Discard, "error")
	pol.Safety = safetyFiles(rp.paths, rp.sessions, "", cwd, nil)
	pol.Private = secrets.PrivateDirs(rp.paths.Data, rp.sessions)
	sb, err := buildSandbox(rp.env.Getenv, rp.paths, rp.user, project, rp.sessions, cwd, log)
	if err != nil {
		return nil, err
	}
	if sb.Active() {
		pol.Sandbox = approvals.Sandbox{Active: true, NetworkDenied: sb.NetworkDenied()}
	}
	out := &replayPolicy{pol: pol}
	gate, err := gateMode(rp.user.Permission.Gate, project.Permission.Gate, log)
	if err != nil {
		return nil, err
	}
	if c := rp.user.Permission.Candidate; c != nil && (rp.opts.candidate || gate == session.GateEnforce) {
		cand, err := candidatePolicy(pol, c, log)
		if err != nil {
			return nil, err
		}
		out.candidate = cand
	}
	rp.cache[cwd] = out
	return out, nil
}

// judge is the pipeline's verdict on call under p in mode, as the server
// forms it (session/permission.go toolEnv and permit).
func (p *replayPolicy) judge(call approvals.Call, mode approvals.Mode, unattended, hooked bool, mem *approvals.Memory) approvals.Verdict {
	pol := *p.pol
	pol.Mode = mode
	if c := p.candidate; c != nil {
		cp := *c
		cp.Mode = mode
		if c.Mode.Valid() && c.Mode.Strictness() < mode.Strictness() {
			cp.Mode = c.Mode
		}
		cp.Private, cp.Sandbox, cp.Safety = pol.Private, pol.Sandbox, pol.Safety
		pol = cp
	}
	// A hook's say keeps the pipeline's ask an ask (session hookPolicy).
	pol.Unattended = unattended && !hooked
	return approvals.Decide(call, &pol, mem)
}

// runReplay is `ama-rpc explain --replay`: it re-judges every recorded
// verdict of a session file (the records its trace entries hold) or of a
// decision log (each record's call looked up in its session's file) under
// the policy configured now, and prints the calls whose pipeline verdict
// would change, then a summary line. It runs no tool, no hook and no
// model, and writes nothing but its output.
func runReplay(env Env, paths config.Paths, user *config.Config, sessionsDir string, opts replayOptions) int {
	if opts.candidate && user.Permission.Candidate == nil {
		fmt.Fprintln(env.Stderr, "ama-rpc explain: --candidate: the user config has no permission.candidate")
		return ExitConfig
	}
	sessions, bad, err := readReplayInput(opts.file, opts.sessions)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ama-rpc explain: %v\n", err)
		return ExitSession
	}
	rp := &replayPolicies{env: env, paths: paths, user: user, sessions: sessionsDir, opts: opts, cache: map[string]*replayPolicy{}}
	w := stdio.NewWriter(env.Stdout, stdio.WriterOptions{})
	sum, err := replay(sessions, rp, paths.Home, opts, w.Send)
	if err != nil {
		w.Close()
		fmt.Fprintf(env.Stderr, "ama-rpc explain: %v\n", err)
		return ExitConfig
	}
	sum.BadLines = bad
	w.Send(map[string]any{"summary": sum})
	w.Close()
	if sum.Changed > 0 {
		return ExitRuntime
	}
	return ExitOK
}

// replay judges the calls of sessions and sends a line for each changed
// (opts.all: each) record.
func replay(sessions []*replaySession, rp *replayPolicies, home string, opts replayOptions, send func(any)) (replaySummary, error) {
	sum := replaySummary{Skipped: map[string]int{}}
	registry := tools.Default()
	for _, s := range sessions {
		mem := approvals.NewMemory()
		for _, c := range s.calls {
			rec := c.rec
			sum.Records++
			line := replayLine{SessionID: rec.SessionID, ToolCallID: rec.ToolCallID, Turn: rec.Turn, Time: rec.Time,
				Tool: rec.Shape.Tool, Mode: rec.Mode}
			decider := decidingVote(rec)
			skip := ""
			mode := approvals.Mode(rec.Mode)
			if opts.mode != "" {
				mode = approvals.Mode(opts.mode)
			}
			switch {
			case s.missing:
				skip = skipNoSession
			case decider == nil:
				skip = skipHook
			case c.args == nil:
				skip = skipNoCall
			case !mode.Valid():
				skip = skipMode
			}
			if skip != "" {
				sum.Skipped[skip]++
				if opts.all {
					line.Skipped = skip
					send(line)
				}
				continue
			}
			p, err := rp.get(s.cwd)
			if err != nil {
				return sum, err
			}
			name := c.name
			if name == "" {
				name = rec.Shape.Tool
			}
			class := approvals.Class(rec.Shape.Class)
			if class == "" {
				class = approvals.ClassExecute
				if t, ok := registry.Get(name); ok {
					class = approvals.Class(tools.PermissionOf(t, c.args))
				}
			}
			call := approvals.Call{Tool: name, Class: class, Input: c.args, Cwd: s.cwd, Home: home,
				Facts: tools.Resolve(name, c.args, &tools.Env{Cwd: s.cwd, Home: home}).Facts()}
			v := p.judge(call, mode, rec.Unattended || opts.unattended, hasVote(rec, "hook"), mem)
			now := session.RuleVote(v)
			line.Mode = string(mode)
			line.Recorded = &replaySide{Vote: decider.Vote, Step: decider.Step, Rule: decider.Rule, Effect: rec.Effect, Code: rec.Code}
			line.Replayed = &replaySide{Vote: now.Vote, Step: now.Step, Rule: now.Rule, Reason: v.Reason}
			line.Changed = now.Vote != decider.Vote
			sum.Replayed++
			if line.Changed {
				sum.Changed++
			} else {
				sum.Unchanged++
			}
			if line.Changed || opts.all {
				send(line)
			}
			// Session memory grows as it did: a person's allow_session.
			for _, vote := range rec.Votes {
				if vote.Layer == "person" && vote.Answer == "allow_session" {
					mem.Remember(call)
				}
			}
		}
	}
	return sum, nil
}

// decidingVote is the approvals pipeline's vote of rec (layer rule, or
// sandbox for the sandbox pass); nil when the pipeline did not run.
func decidingVote(rec *permlog.Record) *permlog.Vote {
	for i := range rec.Votes {
		if l := rec.Votes[i].Layer; l == "rule" || l == "sandbox" {
			return &rec.Votes[i]
		}
	}
	return nil
}

func hasVote(rec *permlog.Record, layer string) bool {
	for _, v := range rec.Votes {
		if v.Layer == layer {
			return true
		}
	}
	return false
}

// readReplayInput reads a session file (its records come from its trace
// entries) or a decision log (its records' calls are looked up in the
// session files under sessionsRoot). bad counts log lines that are not
// records.
func readReplayInput(path, sessionsRoot string) ([]*replaySession, int, error) {
	b, err := ownfs.ReadUser(path, maxReplayLog)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", errReplayInput, err)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(first, &head) == nil && head.Type == "session" {
		snap, err := store.ReadSnapshot(path)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %w", errReplayInput, err)
		}
		return []*replaySession{sessionRecords(snap)}, 0, nil
	}
	return logRecords(b, sessionsRoot)
}

// sessionRecords are the records of a session file's trace entries, each
// with its call: the assistant message the entry names holds it.
func sessionRecords(snap *store.Snapshot) *replaySession {
	s := &replaySession{id: snap.Header.ID, cwd: snap.Header.Cwd}
	byID := make(map[string]*store.Entry, len(snap.Entries))
	for _, e := range snap.Entries {
		byID[e.ID] = e
	}
	for _, e := range snap.Entries {
		if e.Type != store.TypeCustom || e.CustomType() != trace.CustomType {
			continue
		}
		d, err := store.CustomData[struct {
			AssistantEntryID string            `json:"assistantEntryId"`
			Permissions      []*permlog.Record `json:"permissions"`
		}](e)
		if err != nil || len(d.Permissions) == 0 {
			continue
		}
		calls := map[string]*llm.ToolCall{}
		if a := byID[d.AssistantEntryID]; a != nil {
			if m, err := a.Message(); err == nil {
				if am, ok := m.(*llm.AssistantMessage); ok {
					for _, tc := range am.ToolCalls() {
						calls[tc.ID] = tc
					}
				}
			}
		}
		for _, rec := range d.Permissions {
			if rec == nil {
				continue
			}
			c := replayCall{rec: rec}
			if tc := calls[rec.ToolCallID]; tc != nil {
				c.name, c.args = tc.Name, tc.Arguments
			}
			s.calls = append(s.calls, c)
		}
	}
	return s
}

// logRecords groups a decision log's records by session, in log order,
// and finds each record's call in its session file: the next call of the
// session with the record's id, in file order (ids may repeat across
// replies; a call judged twice matches the later call of the same id).
func logRecords(b []byte, sessionsRoot string) ([]*replaySession, int, error) {
	var out []*replaySession
	byID := map[string]*replaySession{}
	bad, n := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		n++
		var rec permlog.Record
		if json.Unmarshal(line, &rec) != nil || rec.V == 0 || rec.SessionID == "" {
			bad++
			continue
		}
		s := byID[rec.SessionID]
		if s == nil {
			s = &replaySession{id: rec.SessionID}
			byID[rec.SessionID] = s
			out = append(out, s)
		}
		s.calls = append(s.calls, replayCall{rec: &rec})
	}
	if err := sc.Err(); err != nil {
		return nil, bad, fmt.Errorf("%w: %w", errReplayInput, err)
	}
	if n > 0 && bad == n {
		return nil, bad, fmt.Errorf("%w: neither a session file nor a permission decision log", errReplayInput)
	}
	infos, _ := store.ListAll(sessionsRoot)
	paths := map[string]string{}
	for _, in := range infos {
		paths[in.ID] = in.Path
	}
	for _, s := range out {
		p, ok := paths[s.id]
		if !ok {
			s.missing = true
			continue
		}
		snap, err := store.ReadSnapshot(p)
		if err != nil {
			s.missing = true
			continue
		}
		s.cwd = snap.Header.Cwd
		var tcs []*llm.ToolCall
		for _, e := range snap.Entries {
			if e.Type != store.TypeMessage {
				continue
			}
			if m, err := e.Message(); err == nil {
				if am, ok := m.(*llm.AssistantMessage); ok {
					tcs = append(tcs, am.ToolCalls()...)
				}
			}
		}
		next := 0
		for i := range s.calls {
			c := &s.calls[i]
			id := c.rec.ToolCallID
			for j := next; j < len(tcs); j++ {
				if tcs[j].ID == id {
					c.name, c.args, next = tcs[j].Name, tcs[j].Arguments, j+1
					break
				}
			}
			if c.args == nil && next > 0 && tcs[next-1].ID == id {
				c.name, c.args = tcs[next-1].Name, tcs[next-1].Arguments // the same call judged again
			}
		}
	}
	return out, bad, nil
}

// sessionsRootOf is where `explain --replay` looks for the session files
// of a log's records: --sessions (relative to cwd), else the sessions
// directory.
func sessionsRootOf(flag, cwd, sessionsDir string) string {
	if flag == "" {
		return sessionsDir
	}
	return absIn(cwd, flag)
}

// absIn is p, relative to cwd when it is not absolute.
func absIn(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

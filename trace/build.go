package trace

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/permlog"
	"github.com/armadra/ama-rpc/store"
)

// CustomType is the customType of the trace entries the session writes.
const CustomType = "ama.trace"

// stepData is the data of an ama.trace entry of kind step. Times are read
// as numbers of any form (files written by other tools).
type stepData struct {
	Kind             string   `json:"kind"`
	Attempt          int      `json:"attempt"`
	AssistantEntryID string   `json:"assistantEntryId"`
	RequestAt        float64  `json:"requestAt"`
	FirstTokenAt     float64  `json:"firstTokenAt"`
	DoneAt           float64  `json:"doneAt"`
	OutputTokens     int      `json:"outputTokens"`
	TPS              *float64 `json:"tps"`
	Status           string   `json:"status"`
	// Permissions is the raw array of the decision records of the step's
	// calls, decoded only for the steps a response shows.
	Permissions json.RawMessage `json:"permissions"`
}

type stepRecord struct {
	entryID string
	data    stepData
}

// builder holds the state of one Build.
type builder struct {
	in     Input
	pos    map[string]int // entry id → index in in.Entries (built on first use, index)
	turnOf []int          // entry index → turn index (-1: none)
	turns  []*Turn
	aux    []*Aux
	steps  []stepRecord // the step records, in selection order (records)
	// recordAt are the indexes of the ama.trace entries (assignTurns).
	recordAt []int32
	stepOf   []int32 // entry index → 1 + its record's index in steps (0: none)
	// from and to bound the window of turns the result returns: only
	// their messages are decoded; the others feed the totals (lite.go).
	from, to int
	lite     []liteTurn // turn index → its tally when outside the window (lite.go)
	// decisions: put the permission decision records on the calls.
	decisions bool
	// Content kept for previews.
	prompts map[*Turn]*llm.UserMessage
	replies map[*Step]*llm.AssistantMessage
	calls   map[*Tool]*llm.ToolCall
	results map[*Tool]*llm.ToolResultMessage
}

// Build returns the trace of the query's window of turns. q is validated
// first; q.TaskID is not looked at (the caller resolves tasks).
func Build(in Input, q Query) (*Result, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	limit, _ := q.limit()
	b := &builder{in: in, decisions: q.Decisions,
		prompts: map[*Turn]*llm.UserMessage{}, replies: map[*Step]*llm.AssistantMessage{},
		calls: map[*Tool]*llm.ToolCall{}, results: map[*Tool]*llm.ToolResultMessage{}}
	b.assignTurns(!q.All())
	from, to, err := b.window(q, limit)
	if err != nil {
		return nil, err
	}
	b.from, b.to = from, to
	b.fill()
	b.finish()
	res := &Result{
		Trace: Trace{Version: Version, SessionID: in.SessionID, Cwd: in.Cwd, Totals: b.totals(),
			Turns: append([]*Turn{}, b.turns[from:to]...), Aux: b.aux, Partial: in.Running, SessionFile: in.SessionFile},
		HasMoreBefore: from > 0,
		LeafID:        in.Leaf,
	}
	if res.Trace.Aux == nil {
		res.Trace.Aux = []*Aux{}
	}
	if from > 0 && from < len(b.turns) {
		res.Cursor.Before = b.turns[from].ID
	}
	if n := len(in.Entries); n > 0 {
		id := in.Entries[n-1].ID
		res.Cursor.Since = &id
	}
	if q.Content == ContentPreview {
		res.Previews = b.previews(res.Trace.Turns)
	}
	return res, nil
}

// index returns the index of the first entry with id in the selection.
func (b *builder) index(id string) (int, bool) {
	if b.pos == nil {
		b.pos = make(map[string]int, len(b.in.Entries))
		for i, e := range b.in.Entries {
			if _, dup := b.pos[e.ID]; !dup {
				b.pos[e.ID] = i
			}
		}
	}
	i, ok := b.pos[id]
	return i, ok
}

// assignTurns creates the turns (in selection order) and maps every entry
// to the turn of its nearest ancestor (itself included) that starts one.
// Turn starts come from the facts the store read with each entry
// (store.TurnStarts.Entry); no message is decoded here. On a path (the
// branch: each entry's parent is the one before it) that ancestor is the
// nearest start before the entry, and parents are not looked at.
func (b *builder) assignTurns(path bool) {
	const unknown = -2
	b.turnOf = make([]int, len(b.in.Entries))
	for i := range b.turnOf {
		b.turnOf[i] = unknown
	}
	starts := store.NewTurnStarts(b.in.Entries)
	var at []int
	for i, e := range b.in.Entries {
		switch {
		case starts.Entry(e):
			at = append(at, i)
		case e.Type == store.TypeCustom && e.CustomType() == CustomType:
			b.recordAt = append(b.recordAt, int32(i)) // for records, in the same pass
		}
	}
	// One allocation for the turns and one for their first entry ids.
	turns, ids := make([]Turn, len(at)), make([]string, len(at))
	b.turns = make([]*Turn, len(at))
	for k, i := range at {
		id := b.in.Entries[i].ID
		ids[k] = id
		turns[k] = Turn{ID: id, Kind: KindTurn, EntryIDs: ids[k : k+1 : k+1], Steps: []*Step{}}
		b.turns[k] = &turns[k]
		b.turnOf[i] = k
	}
	if path {
		t := -1
		for i, ti := range b.turnOf {
			if ti != unknown {
				t = ti
			}
			b.turnOf[i] = t
		}
		return
	}
	var chain []int
	for i := range b.in.Entries {
		chain = chain[:0]
		cur, t := i, -1
		for {
			if b.turnOf[cur] != unknown {
				t = b.turnOf[cur]
				break
			}
			chain = append(chain, cur)
			p := b.in.Entries[cur].ParentID
			if p == nil {
				break
			}
			// On a branch the parent is the entry before; look it up
			// only when it is not.
			next, ok := cur-1, cur > 0 && b.in.Entries[cur-1].ID == *p
			if !ok {
				next, ok = b.index(*p)
			}
			if !ok || len(chain) > len(b.in.Entries) { // outside the selection, or a cycle
				break
			}
			cur = next
		}
		for _, c := range chain {
			b.turnOf[c] = t
		}
	}
}

// fill walks the entries in order and attaches them to their turns.
func (b *builder) fill() {
	b.records()
	for i, e := range b.in.Entries {
		ti := b.turnOf[i]
		var turn *Turn
		if ti >= 0 {
			turn = b.turns[ti]
		}
		switch e.Type {
		case store.TypeMessage:
			switch {
			case turn == nil:
			case ti >= b.from && ti < b.to:
				b.message(turn, e, b.record(i))
			default:
				b.tally(ti, turn, e, b.record(i))
			}
		case store.TypeUsage:
			var u struct {
				Kind     string    `json:"kind"`
				Provider string    `json:"provider"`
				Model    string    `json:"model"`
				Usage    llm.Usage `json:"usage"`
			}
			if e.Decode(&u) == nil {
				b.addAux(e, turn, u.Kind, u.Provider, u.Model, u.Usage)
			}
		case store.TypeCompaction, store.TypeBranchSummary:
			var u struct {
				Usage *llm.Usage `json:"usage"`
			}
			if e.Decode(&u) == nil && u.Usage != nil {
				purpose := PurposeCompaction
				if e.Type == store.TypeBranchSummary {
					purpose = PurposeBranchSummary
				}
				b.addAux(e, turn, purpose, "", "", *u.Usage)
			}
		}
	}
}

func (b *builder) addAux(e *store.Entry, turn *Turn, purpose, provider, model string, u llm.Usage) {
	a := &Aux{ID: e.ID, Kind: KindAux, Purpose: purpose, Provider: provider, Model: model, Usage: u}
	if turn != nil {
		a.TurnID = turn.ID
	}
	b.aux = append(b.aux, a)
}

// records reads the ama.trace step records of the selection and puts
// each on the entry it names (assistantEntryId): the first record that
// names an entry is its step's. The session writes a record after its
// reply's tool results, so the entry is looked for a few entries back
// first; only a record further away needs the id index. assignTurns
// found the records in its pass over the entries (recordAt).
func (b *builder) records() {
	const near = 64
	at := b.recordAt
	if len(at) == 0 {
		return
	}
	b.steps = make([]stepRecord, 0, len(at))
	b.stepOf = make([]int32, len(b.in.Entries))
	for _, r := range at {
		r := int(r)
		e := b.in.Entries[r]
		var d stepData
		if !readStep(e, &d) {
			var err error
			if d, err = store.CustomData[stepData](e); err != nil {
				continue
			}
		}
		if d.Kind != "step" || d.AssistantEntryID == "" {
			continue
		}
		a := -1
		for j := r - 1; j >= max(0, r-near); j-- {
			if b.in.Entries[j].ID == d.AssistantEntryID {
				a = j
				break
			}
		}
		if a < 0 {
			if i, ok := b.index(d.AssistantEntryID); ok {
				a = i
			}
		}
		if a >= 0 && b.stepOf[a] == 0 {
			b.steps = append(b.steps, stepRecord{entryID: e.ID, data: d})
			b.stepOf[a] = int32(len(b.steps))
		}
	}
}

// record returns the step record of entry i (nil: none).
func (b *builder) record(i int) *stepRecord {
	if i < len(b.stepOf) && b.stepOf[i] > 0 {
		return &b.steps[b.stepOf[i]-1]
	}
	return nil
}

// message attaches a message entry of turn.
func (b *builder) message(turn *Turn, e *store.Entry, rec *stepRecord) {
	m, err := e.Message()
	if err != nil {
		return
	}
	switch m := m.(type) {
	case *llm.UserMessage:
		if e.ID != turn.ID {
			turn.EntryIDs = append(turn.EntryIDs, e.ID)
		} else {
			b.prompts[turn] = m
			turn.StartedAt = m.Timestamp
		}
	case *llm.AssistantMessage:
		b.step(turn, e, m, rec)
	case *llm.ToolResultMessage:
		for si := len(turn.Steps) - 1; si >= 0; si-- {
			for _, t := range turn.Steps[si].Tools {
				if t.ID == m.ToolCallID && b.results[t] == nil {
					b.results[t] = m
					t.EntryIDs = append(t.EntryIDs, e.ID)
					t.IsError = m.IsError
					t.Status = StatusOK
					if m.IsError {
						t.Status = StatusError
					}
					t.EndedAt = m.Timestamp
					return
				}
			}
		}
	}
}

// step adds the step of an assistant message.
func (b *builder) step(turn *Turn, e *store.Entry, m *llm.AssistantMessage, r *stepRecord) {
	s := &Step{ID: e.ID, Kind: KindStep, EntryIDs: []string{e.ID}, Provider: m.Provider, Model: m.Model, Attempt: 1,
		Usage: m.Usage, StopReason: m.StopReason, Tools: []*Tool{}, ThinkingLevel: m.ThinkingLevel,
		CacheHitRatio: hitRatio(m.Usage.Input, m.Usage.CacheRead, m.Usage.CacheWrite)}
	switch m.StopReason {
	case llm.StopError:
		s.Status = StatusError
	case llm.StopAborted:
		s.Status = StatusAborted
	default:
		s.Status = StatusOK
	}
	if n := len(turn.Steps); n > 0 && turn.Steps[n-1].StopReason == llm.StopError {
		s.Attempt = turn.Steps[n-1].Attempt + 1 // an automatic retry
	}
	if r != nil {
		s.EntryIDs = append(s.EntryIDs, r.entryID)
		d := r.data
		if d.Attempt > 0 {
			s.Attempt = d.Attempt
		}
		switch d.Status {
		case StatusOK, StatusError, StatusAborted:
			s.Status = d.Status
		}
		s.RequestAt, s.FirstTokenAt, s.DoneAt = ms(d.RequestAt), ms(d.FirstTokenAt), ms(d.DoneAt)
		if s.RequestAt > 0 && s.FirstTokenAt >= s.RequestAt {
			ttft := s.FirstTokenAt - s.RequestAt
			s.TTFTMs = &ttft
		}
		out := d.OutputTokens
		if out == 0 {
			out = m.Usage.Output
		}
		switch {
		case d.TPS != nil && *d.TPS >= 0 && !math.IsInf(*d.TPS, 0):
			tps := *d.TPS
			s.TPS = &tps
		case s.FirstTokenAt > 0 && s.DoneAt > s.FirstTokenAt && out > 0:
			tps := math.Round(float64(out)/(float64(s.DoneAt-s.FirstTokenAt)/1000)*10) / 10
			s.TPS = &tps
		}
	}
	for _, tc := range m.ToolCalls() {
		t := &Tool{ID: tc.ID, Kind: KindTool, Name: tc.Name, Status: StatusRunning, EntryIDs: []string{e.ID}, Children: []*Tool{}}
		b.calls[t] = tc
		s.Tools = append(s.Tools, t)
	}
	if b.decisions && r != nil && len(r.data.Permissions) > 0 {
		attachDecisions(s, r.data.Permissions)
	}
	b.replies[s] = m
	turn.Steps = append(turn.Steps, s)
}

func ms(f float64) int64 {
	if f <= 0 || math.IsNaN(f) || f > math.MaxInt64/2 {
		return 0
	}
	return int64(f)
}

func hitRatio(input, cacheRead, cacheWrite int) float64 {
	if den := input + cacheRead + cacheWrite; den > 0 {
		return float64(cacheRead) / float64(den)
	}
	return 0
}

// finish sets turn statuses, times and usage.
func (b *builder) finish() {
	running := -1
	if b.in.Running && b.in.Leaf != nil {
		n := len(b.in.Entries)
		if n > 0 && b.in.Entries[n-1].ID == *b.in.Leaf { // the usual case: the branch ends at the leaf
			running = b.turnOf[n-1]
		} else if i, ok := b.index(*b.in.Leaf); ok {
			running = b.turnOf[i]
		}
	}
	for ti, t := range b.turns {
		if l := b.liteTurn(ti); l != nil {
			l.finish(t)
			continue
		}
		u := &t.Usage
		for _, s := range t.Steps {
			u.addRequest(s.Usage)
			u.ToolCalls += len(s.Tools)
			t.EndedAt = max(t.EndedAt, s.DoneAt, b.replies[s].Timestamp)
			for _, tool := range s.Tools {
				t.EndedAt = max(t.EndedAt, tool.EndedAt)
			}
		}
		u.CacheHitRatio = hitRatio(u.Input, u.CacheRead, u.CacheWrite)
		if t.StartedAt > 0 && t.EndedAt > t.StartedAt {
			u.DurationMs = t.EndedAt - t.StartedAt
		}
		switch {
		case ti == running:
			t.Status = StatusRunning
		case len(t.Steps) > 0:
			t.Status = t.Steps[len(t.Steps)-1].Status
		default: // the turn never got a reply (the process stopped)
			t.Status = StatusAborted
		}
	}
}

// totals sums every turn of the selection and the auxiliary requests.
func (b *builder) totals() Usage {
	var u Usage
	for _, t := range b.turns {
		u.Requests += t.Usage.Requests
		u.Input += t.Usage.Input
		u.Output += t.Usage.Output
		u.CacheRead += t.Usage.CacheRead
		u.CacheWrite += t.Usage.CacheWrite
		u.ToolCalls += t.Usage.ToolCalls
		u.Cost += t.Usage.Cost
		u.DurationMs += t.Usage.DurationMs
	}
	for _, a := range b.aux {
		u.addRequest(a.Usage)
	}
	u.CacheHitRatio = hitRatio(u.Input, u.CacheRead, u.CacheWrite)
	return u
}

// window returns the range [from, to) of turns the query selects.
func (b *builder) window(q Query, limit int) (from, to int, err error) {
	n := len(b.turns)
	switch {
	case q.Before != "":
		for i, t := range b.turns {
			if t.ID == q.Before {
				return max(0, i-limit), i, nil
			}
		}
		return 0, 0, invalid("before %s is not a turn on this branch", q.Before)
	case q.Since != "":
		// The last entry with that id, looked for from the end: paging
		// forward asks for what follows a recent entry.
		i, ok := len(b.in.Entries)-1, false
		for ; i >= 0 && !ok; i-- {
			ok = b.in.Entries[i].ID == q.Since
		}
		i++
		if !ok {
			return 0, n, nil // not in the selection: start over
		}
		// The turn holding since, or an earlier one that a later entry
		// belongs to; entries before the first turn start at the next turn.
		from = n
		for j := i; j < len(b.in.Entries); j++ {
			if t := b.turnOf[j]; t >= 0 && t < from {
				from = t
			}
		}
		return from, n, nil
	default:
		return max(0, n-limit), n, nil
	}
}

// attachDecisions puts the step's decision records on its calls: a
// record on the call it names, a nested call's on the call that made it
// (its parentToolCallId, or the call whose id starts its own: "<id>.<n>",
// "<id>_n<k>"); a record of no call of the step on the step. Records that
// do not decode are left out.
func attachDecisions(s *Step, raw json.RawMessage) {
	var recs []*permlog.Record
	if json.Unmarshal(raw, &recs) != nil {
		return
	}
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		if t := decidedTool(s.Tools, rec); t != nil {
			t.Decisions = append(t.Decisions, rec)
		} else {
			s.Decisions = append(s.Decisions, rec)
		}
	}
}

func decidedTool(tools []*Tool, rec *permlog.Record) *Tool {
	for _, id := range []string{rec.ToolCallID, rec.ParentToolCallID} {
		for _, t := range tools {
			if id != "" && t.ID == id {
				return t
			}
		}
	}
	for _, t := range tools {
		if rest, ok := strings.CutPrefix(rec.ToolCallID, t.ID); ok && t.ID != "" && (strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "_n")) {
			return t
		}
	}
	return nil
}

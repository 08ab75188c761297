package trace

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
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

// stepRef is where a step record is: the entry it names (at), its own
// entry (rec) and its doneAt, all a turn outside the window needs of it;
// a returned step reads the record again (stepRecordOf).
type stepRef struct {
	at, rec int32
	doneAt  float64
}

// builder holds the state of one Build.
type builder struct {
	in  Input
	pos map[string]int // entry id → index in in.Entries (built on first use, index)
	// path: the entries are a branch (each one's parent is the one
	// before), so a turn's entries are contiguous and an entry's turn is
	// the last start at or before it; otherwise turnOf maps each entry.
	path   bool
	starts []int32 // turn index → the index of its first (user) entry
	turnOf []int32 // entry index → turn index (-1: none); off a path only
	// turns are the window's turns [from, to), the only ones built: only
	// their messages are decoded; the others feed the totals (lite.go).
	turns    []*Turn
	from, to int
	aux      []*Aux
	// steps are the step records, ordered by the entry they name (records).
	steps []stepRef
	// recordAt are the indexes of the ama.trace entries (assignTurns).
	recordAt []int32
	// The tallies of the turns outside the window (lite.go): on a path the
	// one being walked (cur, its turn curTurn), else one per turn.
	cur     liteTurn
	curTurn int
	lite    []liteTurn
	// The finished tallies, summed: of the turns before the window and
	// of those after it.
	liteSum, liteAfter Usage
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
	b := &builder{in: in, curTurn: -1, decisions: q.Decisions,
		prompts: map[*Turn]*llm.UserMessage{}, replies: map[*Step]*llm.AssistantMessage{},
		calls: map[*Tool]*llm.ToolCall{}, results: map[*Tool]*llm.ToolResultMessage{}}
	b.assignTurns(!q.All())
	from, to, err := b.window(q, limit)
	if err != nil {
		return nil, err
	}
	b.from, b.to = from, to
	b.makeTurns()
	b.fill()
	b.finish()
	res := &Result{
		Trace: Trace{Version: Version, SessionID: in.SessionID, Cwd: in.Cwd, Totals: b.totals(),
			Turns: b.turns, Aux: b.aux, Partial: in.Running, SessionFile: in.SessionFile},
		HasMoreBefore: from > 0,
		LeafID:        in.Leaf,
	}
	if res.Trace.Aux == nil {
		res.Trace.Aux = []*Aux{}
	}
	if from > 0 && from < len(b.starts) {
		res.Cursor.Before = b.turnID(from)
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

// turnID is the id of turn ti: its first entry's.
func (b *builder) turnID(ti int) string { return b.in.Entries[b.starts[ti]].ID }

// turnAt returns the turn of entry i (-1: none).
func (b *builder) turnAt(i int) int {
	if !b.path {
		return int(b.turnOf[i])
	}
	// The last start at or before i.
	k, _ := slices.BinarySearch(b.starts, int32(i+1))
	return k - 1
}

// inWindow reports whether turn ti is returned.
func (b *builder) inWindow(ti int) bool { return ti >= b.from && ti < b.to }

// makeTurns builds the window's turns (one allocation for them and one
// for their first entry ids).
func (b *builder) makeTurns() {
	n := b.to - b.from
	turns, ids := make([]Turn, n), make([]string, n)
	b.turns = make([]*Turn, n)
	for k := range n {
		ids[k] = b.turnID(b.from + k)
		turns[k] = Turn{ID: ids[k], Kind: KindTurn, EntryIDs: ids[k : k+1 : k+1], Steps: []*Step{}}
		b.turns[k] = &turns[k]
	}
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

// assignTurns finds the turns (in selection order) and, off a path,
// maps every entry to the turn of its nearest ancestor (itself included)
// that starts one. Turn starts come from the facts the store read with
// each entry (store.TurnStarts.Entry); no message is decoded here. On a
// path (the branch: each entry's parent is the one before it) that
// ancestor is the nearest start before the entry: turnAt finds it, and
// parents are not looked at.
func (b *builder) assignTurns(path bool) {
	b.path = path
	starts := store.NewTurnStarts(b.in.Entries)
	for i, e := range b.in.Entries {
		switch {
		case starts.Entry(e):
			b.starts = append(b.starts, int32(i))
		case e.Type == store.TypeCustom && e.IsCustomType(CustomType):
			b.recordAt = append(b.recordAt, int32(i)) // for records, in the same pass
		}
	}
	if path {
		return
	}
	const unknown = -2
	b.turnOf = make([]int32, len(b.in.Entries))
	for i := range b.turnOf {
		b.turnOf[i] = unknown
	}
	for k, i := range b.starts {
		b.turnOf[i] = int32(k)
	}
	var chain []int
	for i := range b.in.Entries {
		chain = chain[:0]
		cur, t := i, int32(-1)
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
			// In file order the parent is often the entry before; look it
			// up only when it is not.
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

// fill walks the entries in order and attaches them to their turns: a
// message of a returned turn is decoded, one of another turn tallied.
func (b *builder) fill() {
	b.records()
	next := 0 // on a path: the next step record's index in steps
	ti, nextStart := -1, 0
	for i, e := range b.in.Entries {
		if b.path {
			for nextStart < len(b.starts) && int(b.starts[nextStart]) <= i {
				ti, nextStart = nextStart, nextStart+1
			}
		} else {
			ti = int(b.turnOf[i])
		}
		switch e.Type {
		case store.TypeMessage:
			var rec *stepRef
			if b.path {
				for next < len(b.steps) && int(b.steps[next].at) < i {
					next++
				}
				if next < len(b.steps) && int(b.steps[next].at) == i {
					rec = &b.steps[next]
				}
			} else {
				rec = b.record(i)
			}
			switch {
			case ti < 0:
			case b.inWindow(ti):
				b.message(b.turns[ti-b.from], e, b.stepRecordOf(rec))
			default:
				b.tally(ti, i, e, rec)
			}
		case store.TypeUsage:
			var u struct {
				Kind     string    `json:"kind"`
				Provider string    `json:"provider"`
				Model    string    `json:"model"`
				Usage    llm.Usage `json:"usage"`
			}
			if e.Decode(&u) == nil {
				b.addAux(e, ti, u.Kind, u.Provider, u.Model, u.Usage)
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
				b.addAux(e, ti, purpose, "", "", *u.Usage)
			}
		}
	}
	b.flushLite()
}

func (b *builder) addAux(e *store.Entry, ti int, purpose, provider, model string, u llm.Usage) {
	a := &Aux{ID: e.ID, Kind: KindAux, Purpose: purpose, Provider: provider, Model: model, Usage: u}
	if ti >= 0 {
		a.TurnID = b.turnID(ti)
	}
	b.aux = append(b.aux, a)
}

// records reads the ama.trace step records of the selection and puts
// each on the entry it names (assistantEntryId): the first record that
// names an entry is its step's. The session writes a record after its
// reply's tool results, so the entry is looked for a few entries back
// first; only a record further away needs the id index. assignTurns
// found the records in its pass over the entries (recordAt). steps end
// ordered by the entry they name (stepAt), so fill meets them in order.
func (b *builder) records() {
	const near = 64
	at := b.recordAt
	if len(at) == 0 {
		return
	}
	b.steps = make([]stepRef, 0, len(at))
	sorted := true
	for _, r := range at {
		r := int(r)
		var d stepData
		if !b.readRecord(r, &d) || d.Kind != "step" || d.AssistantEntryID == "" {
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
		if a < 0 {
			continue
		}
		if n := len(b.steps); n > 0 && int(b.steps[n-1].at) >= a {
			if int(b.steps[n-1].at) == a {
				continue // the entry has its record
			}
			sorted = false
		}
		b.steps = append(b.steps, stepRef{at: int32(a), rec: int32(r), doneAt: d.DoneAt})
	}
	if !sorted {
		// Records out of order: by the entry they name, the first record
		// of an entry kept.
		slices.SortStableFunc(b.steps, func(x, y stepRef) int { return cmp.Compare(x.at, y.at) })
		b.steps = slices.CompactFunc(b.steps, func(x, y stepRef) bool { return x.at == y.at })
	}
}

// readRecord reads the data of the ama.trace entry at index r (false: it
// cannot be decoded).
func (b *builder) readRecord(r int, d *stepData) bool {
	e := b.in.Entries[r]
	if readStep(e, d) {
		return true
	}
	var err error
	*d, err = store.CustomData[stepData](e)
	return err == nil
}

// record returns the step record of entry i (nil: none).
func (b *builder) record(i int) *stepRef {
	if k, ok := slices.BinarySearchFunc(b.steps, int32(i), func(r stepRef, at int32) int { return cmp.Compare(r.at, at) }); ok {
		return &b.steps[k]
	}
	return nil
}

// stepRecordOf reads the record ref points at (nil: none).
func (b *builder) stepRecordOf(ref *stepRef) *stepRecord {
	if ref == nil {
		return nil
	}
	r := &stepRecord{entryID: b.in.Entries[ref.rec].ID}
	if !b.readRecord(int(ref.rec), &r.data) {
		return nil // not reached: it was read before
	}
	return r
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
			running = b.turnAt(n - 1)
		} else if i, ok := b.index(*b.in.Leaf); ok {
			running = b.turnAt(i)
		}
	}
	for k, t := range b.turns {
		ti := b.from + k
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
	u := b.liteSum
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
	u.Requests += b.liteAfter.Requests
	u.Input += b.liteAfter.Input
	u.Output += b.liteAfter.Output
	u.CacheRead += b.liteAfter.CacheRead
	u.CacheWrite += b.liteAfter.CacheWrite
	u.ToolCalls += b.liteAfter.ToolCalls
	u.Cost += b.liteAfter.Cost
	u.DurationMs += b.liteAfter.DurationMs
	for _, a := range b.aux {
		u.addRequest(a.Usage)
	}
	u.CacheHitRatio = hitRatio(u.Input, u.CacheRead, u.CacheWrite)
	return u
}

// window returns the range [from, to) of turns the query selects.
func (b *builder) window(q Query, limit int) (from, to int, err error) {
	n := len(b.starts)
	switch {
	case q.Before != "":
		for i := range n {
			if b.turnID(i) == q.Before {
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
			if t := b.turnAt(j); t >= 0 && t < from {
				from = t
				if b.path {
					break // on a path the turns only grow
				}
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

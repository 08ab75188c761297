package session

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/armadra/ama-rpc/checkpoint"
	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// RewindPoint is a user message that started a turn on the active branch.
type RewindPoint struct {
	EntryID       string
	Text          string
	Timestamp     int64
	HasCheckpoint bool
}

// Draft is the text (and images) of the message a rewind went back to, for
// the host to put back into its input box.
type Draft struct {
	Text   string
	Images []*llm.ImageContent
}

// RewindRequest is a rewind command.
type RewindRequest struct {
	EntryID    string
	Mode       string // both, conversation, code
	DryRun     bool
	OnConflict string // skip (default), overwrite
}

// RewindResult is what a rewind did (or, dry, would do).
type RewindResult struct {
	// Conversation is set for both and conversation.
	Conversation *ConversationRewind
	// Code is set for both and code.
	Code *checkpoint.Result
}

// ConversationRewind says where the conversation went back to.
type ConversationRewind struct {
	LeafID *string
	Draft  Draft
}

// point is a rewind point with the part of the branch it starts.
type point struct {
	RewindPoint
	tail  []*store.Entry // the branch from the user entry to the leaf
	entry *store.Entry
	msg   *llm.UserMessage
}

// pointsIn lists the rewind points of a part of the active branch that
// ends at the leaf, oldest first: user messages that started a turn
// (store.TurnStarts: steering and follow-up messages, and a host message
// queued as one, belong to the turn they joined). The turn starts come
// from the facts the store read with each entry; only the messages
// returned are decoded.
func (st *state) pointsIn(entries []*store.Entry) []point {
	checkpoints := st.checkpointed(entries)
	starts := store.NewTurnStarts(entries)
	var out []point
	for i := range entries {
		if p, ok := pointAt(starts, entries[i:], checkpoints); ok {
			out = append(out, p)
		}
	}
	return out
}

// pointAt returns the rewind point tail[0] is, if it is one.
func pointAt(starts *store.TurnStarts, tail []*store.Entry, checkpoints map[string]bool) (point, bool) {
	e := tail[0]
	if !starts.Entry(e) {
		return point{}, false
	}
	m, err := e.Message()
	if err != nil {
		return point{}, false
	}
	u, ok := m.(*llm.UserMessage)
	if !ok {
		return point{}, false
	}
	return point{RewindPoint: RewindPoint{EntryID: e.ID, Text: u.Content.PlainText(), Timestamp: u.Timestamp,
		HasCheckpoint: checkpoints[e.ID]}, tail: tail, entry: e, msg: u}, true
}

// checkpointed returns the user messages that the checkpoint records among
// entries name (nil without file checkpoints). A record follows the
// message it names, so the part of the branch from a message on holds
// the message's records.
func (st *state) checkpointed(entries []*store.Entry) map[string]bool {
	if st.s.deps.Checkpoints == nil {
		return nil
	}
	out := map[string]bool{}
	// A turn with a file whose backup could not be saved (a full disk)
	// has no usable checkpoint: rewinding it would restore nothing for
	// that file (issue 36).
	failed := map[string]bool{}
	for _, e := range entries {
		switch e.CustomType() {
		case customCheckpoint:
			if d, err := store.CustomData[checkpointData](e); err == nil {
				out[d.UserEntryID] = true
				for _, r := range d.Files {
					failed[d.UserEntryID] = failed[d.UserEntryID] || r.Skipped == checkpoint.SkipBackupMissing
				}
			}
		case customCheckpointTrack:
			if d, err := store.CustomData[trackData](e); err == nil && d.Record.Skipped == checkpoint.SkipBackupMissing {
				failed[d.UserEntryID] = true
			}
		}
	}
	for id, f := range failed {
		if f {
			out[id] = false
		}
	}
	return out
}

// findPoint returns the rewind point id. It looks at the branch from id
// to the leaf only (the turns a rewind to it would undo), and decodes only
// that message.
func (st *state) findPoint(id string) (point, error) {
	if tail := st.tree.Tail(id); tail != nil {
		if p, ok := pointAt(store.NewTurnStarts(tail), tail, st.checkpointed(tail)); ok {
			return p, nil
		}
	}
	return point{}, fmt.Errorf("%w: entry %s is not a rewind point on the active branch", ErrInvalidArguments, id)
}

// RewindPoints lists the rewind points of the active branch.
func (s *Session) RewindPoints() ([]RewindPoint, error) {
	return call(s, func(st *state) []RewindPoint {
		out := []RewindPoint{}
		for _, p := range st.pointsIn(st.branch()) {
			out = append(out, p.RewindPoint)
		}
		return out
	})
}

// Rewind goes back to a rewind point: the conversation (the leaf moves to
// before the message, whose text comes back as a draft), the files the
// turns since then changed (restored from their checkpoints), or both. A
// real rewind reports session_rewound before it returns; a dry run
// changes nothing and reports nothing.
func (s *Session) Rewind(req RewindRequest) (RewindResult, error) {
	switch req.Mode {
	case "both", "conversation", "code":
	default:
		return RewindResult{}, fmt.Errorf("%w: mode must be both, conversation or code", ErrInvalidArguments)
	}
	switch req.OnConflict {
	case "":
		req.OnConflict = checkpoint.OnConflictSkip
	case checkpoint.OnConflictSkip, checkpoint.OnConflictOverwrite:
	default:
		return RewindResult{}, fmt.Errorf("%w: onConflict must be skip or overwrite", ErrInvalidArguments)
	}
	type out struct {
		res RewindResult
		err error
	}
	o, err := call(s, func(st *state) out {
		res, err := st.rewind(req)
		return out{res, err}
	})
	if err != nil {
		return RewindResult{}, err
	}
	if o.err == nil {
		s.postRewind(req, o.res)
	}
	return o.res, o.err
}

func (st *state) rewind(req RewindRequest) (RewindResult, error) {
	if st.run != nil {
		return RewindResult{}, fmt.Errorf("%w: a run is active", ErrBusy)
	}
	p, err := st.findPoint(req.EntryID)
	if err != nil {
		return RewindResult{}, err
	}
	var res RewindResult
	var code checkpoint.Result
	if req.Mode != "conversation" {
		if !p.HasCheckpoint {
			return RewindResult{}, fmt.Errorf("%w: this message has no checkpoint; rewind the conversation only", ErrNoCheckpoint)
		}
		code = st.restoreFiles(p, checkpoint.RestoreOptions{DryRun: req.DryRun, OnConflict: req.OnConflict})
		if !req.DryRun && code.AllFailed() {
			return RewindResult{}, fmt.Errorf("%w: no file could be restored (%s)", ErrRewindFailed, failures(code))
		}
		res.Code = &code
	}
	if req.Mode != "code" {
		res.Conversation = &ConversationRewind{LeafID: p.entry.ParentID, Draft: Draft{Text: p.msg.Content.PlainText(), Images: p.msg.Content.Images()}}
	}
	if req.DryRun {
		return res, nil
	}
	if res.Conversation != nil {
		st.moveLeaf(p.entry.ParentID)
	}
	switch req.Mode {
	case "conversation":
		// Files stay as they are: tell the model which ones the
		// abandoned turns had changed.
		st.rewindNote = rewindNote("The conversation was rewound to an earlier message, but files on disk were not restored; these files may not match what the conversation now says", st.changedSince(p))
	case "code":
		st.rewindNote = rewindNote("Files were restored to their state before an earlier message while the conversation was kept; earlier messages may describe changes that no longer exist in these files", code.Changed())
	}
	st.s.publish(events.SessionRewound{EntryID: p.EntryID, Mode: req.Mode, Restored: nonNil(code.Restored), Deleted: nonNil(code.Deleted),
		Conflicts: nonNil(code.Conflicts), Skipped: skippedFiles(code)})
	return res, nil
}

// restoreFiles restores (or, dry, previews) the files changed by the turns
// from p to the end of the branch.
func (st *state) restoreFiles(p point, opt checkpoint.RestoreOptions) checkpoint.Result {
	files := checkpoint.Union(checkpointRecords(p.tail, st.turnsIn(p))...)
	return st.s.deps.Checkpoints.Restore(st.cwd, files, opt)
}

// turnsIn returns the turns from p to the leaf, p's included.
func (st *state) turnsIn(p point) map[string]bool {
	turns := map[string]bool{}
	for _, q := range st.pointsIn(p.tail) {
		turns[q.EntryID] = true
	}
	return turns
}

// changedSince lists the files the turns from p on changed.
func (st *state) changedSince(p point) []string {
	if st.s.deps.Checkpoints == nil {
		return nil
	}
	files := checkpoint.Union(checkpointRecords(p.tail, st.turnsIn(p))...)
	out := make([]string, 0, len(files))
	for k := range files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// moveLeaf makes id (nil: before the root) the leaf and records it with a
// leaf line, so new messages start a new branch there.
func (st *state) moveLeaf(id *string) {
	_ = st.tree.SetLeaf(id)
	st.persistLeaf(id)
	st.resetCache() // a navigation is a reset point of the cache chain
}

// rewindNote is the ama.rewind-note text (at most 20 files listed).
func rewindNote(lead string, files []string) string {
	if len(files) == 0 {
		return ""
	}
	const max = 20
	var b strings.Builder
	b.WriteString(lead)
	b.WriteString(":")
	for i, f := range files {
		if i == max {
			fmt.Fprintf(&b, "\n- … and %d more", len(files)-max)
			break
		}
		b.WriteString("\n- " + f)
	}
	return b.String()
}

// pendingNotes appends the rewind note, if any, before a prompt.
func (st *state) pendingNotes() {
	if st.rewindNote != "" {
		st.appendMessage(llm.NewCustom("ama.rewind-note", st.rewindNote, false, st.nowMs()), false)
		st.rewindNote = ""
	}
}

func failures(r checkpoint.Result) string {
	var parts []string
	for _, f := range r.Failed {
		parts = append(parts, f.Path+": "+f.Message)
	}
	return strings.Join(parts, "; ")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func skippedFiles(r checkpoint.Result) []events.SkippedFile {
	out := make([]events.SkippedFile, 0, len(r.Skipped))
	for _, s := range r.Skipped {
		out = append(out, events.SkippedFile{Path: s.Path, Reason: s.Reason})
	}
	return out
}

// SummarizeFromResult is the outcome of summarize_from.
type SummarizeFromResult struct {
	LeafID  *string
	Draft   Draft
	Summary string
}

// SummarizeFrom abandons the branch from the rewind point entryID on: the
// leaf moves to before that message, a branch_summary of what is left
// behind is written there (so the model keeps the gist), and the message
// comes back as a draft.
func (s *Session) SummarizeFrom(entryID, instructions string, reply func(SummarizeFromResult, error)) {
	if !s.post(func(st *state) {
		if st.run != nil {
			reply(SummarizeFromResult{}, fmt.Errorf("%w: a run is active", ErrBusy))
			return
		}
		p, err := st.findPoint(entryID)
		if err != nil {
			reply(SummarizeFromResult{}, err)
			return
		}
		if st.model == nil || st.provider == nil || st.provider.Provider == nil {
			reply(SummarizeFromResult{}, fmt.Errorf("%w: summarizing needs a model", ErrNoModel))
			return
		}
		abandon := make(map[*store.Entry]bool, len(p.tail))
		for _, e := range p.tail {
			abandon[e] = true
		}
		msgs, info, _ := store.Project(st.branch())
		var abandoned []llm.Message
		for i, e := range info.Entries {
			if abandon[e] {
				if _, sys := msgs[i].(*llm.SystemMessage); !sys {
					abandoned = append(abandoned, msgs[i])
				}
			}
		}
		ask := "Summarise what happened in the conversation above, from the message \"" + truncate(p.Text, 200) +
			"\" on: that part is being abandoned, and the summary is all that will remain of it."
		if in := strings.TrimSpace(instructions); in != "" {
			ask += "\nAdditional instructions: " + in
		}
		req := &llm.Request{Model: st.model, System: compactionPrompt, Purpose: llm.PurposeSummary, SessionID: st.id,
			ThinkingLevel: "off", Messages: append(abandoned, llm.NewUser(ask, st.nowMs(), "")), Timestamp: st.nowMs()}
		provider := st.provider.Provider
		oldLeaf := st.tree.Leaf()
		ctx, cancel := context.WithCancel(context.Background())
		st.run = &runState{ctx: ctx, cancel: cancel, kind: runSummary}
		go func() {
			defer cancel()
			msg, err := provider.Stream(ctx, req, nil)
			_ = s.do(func(st *state) {
				st.settled()
				if err != nil {
					reply(SummarizeFromResult{}, fmt.Errorf("summarize: %w", err))
					return
				}
				summary := ""
				if msg != nil {
					summary = strings.TrimSpace(msg.Text(""))
				}
				if summary == "" {
					reply(SummarizeFromResult{}, errors.New("summarize: the model returned an empty summary"))
					return
				}
				from := ""
				if oldLeaf != nil {
					from = *oldLeaf
				}
				st.moveLeaf(p.entry.ParentID)
				usage := msg.Usage
				st.recordRequest(req, nil, msg) // reporting state and hit rates only
				st.appendEntry(store.BranchSummaryEntry(from, summary, &usage))
				st.s.publish(events.SessionRewound{EntryID: p.EntryID, Mode: "conversation", Restored: []string{}, Deleted: []string{},
					Conflicts: []string{}, Skipped: []events.SkippedFile{}})
				reply(SummarizeFromResult{LeafID: st.tree.Leaf(), Draft: Draft{Text: p.msg.Content.PlainText(), Images: p.msg.Content.Images()},
					Summary: summary}, nil)
			})
		}()
	}) {
		reply(SummarizeFromResult{}, ErrClosed)
	}
}

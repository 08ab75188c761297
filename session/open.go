package session

import (
	"fmt"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/store"
)

// Open resumes the session stored at path. The file is validated, locked
// (ErrLocked while another process writes it) and repaired (a half-written
// last line is cut). The model and thinking level of the active branch are
// restored; opts.Model is used when the branch has none, or always with
// opts.ForceModel. The session runs in the cwd recorded in its header.
func Open(deps *Deps, path string, opts Options) (*Session, error) {
	d := deps.withDefaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", path, err)
	}
	f, snap, err := store.Open(abs, store.OpenOptions{})
	if err != nil {
		return nil, err
	}
	h := snap.Header
	s := newSession(d, h.ID, h.Cwd, opts.Approver)
	if fb := snap.Fallback; fb != nil { // once per open (store/fallback.go)
		s.log.Warn("session file: the fast parser failed; the standard decoder read the line(s)",
			zap.String("path", abs), zap.Int("line", fb.Line), zap.String("reason", fb.Reason), zap.Int("lines", fb.Count))
	}
	st := newState(s, h.ID, h.Cwd, snap.Tree())
	if t, err := time.Parse(store.TimeFormat, h.Timestamp); err == nil {
		st.created = t
	}
	st.disk.file, st.disk.path = f, abs
	st.parentSession = h.ParentSession
	if err := st.restore(st.branch(), opts); err != nil {
		_ = f.Close()
		return nil, err
	}
	s.linkTask(st, opts)
	s.attachMCP(opts)
	return s.launch(st), nil
}

// restore applies the plan state and the settings of the active branch
// (model, thinking level, permission mode), which the caller hands over
// (st.branch(); a fork has it already), then opts: opts.PermissionMode (an explicit
// --permission-mode) wins over the recorded mode and is recorded itself;: opts.Model only when the branch has no usable model or
// with ForceModel; opts.ThinkingLevel only when the branch has none.
func (st *state) restore(branch []*store.Entry, opts Options) error {
	// The model and thinking level come from their own entries (the
	// latest of each on the branch); no message is decoded on resume.
	recorded, hasMode, settings := st.rebuildPlan(branch)
	model, level, _ := store.EntrySettings(settings.model, settings.level)
	restored := false
	if ref := model; ref != nil {
		if m, p, err := st.s.deps.Models.Find(ref.Provider, ref.ID); err == nil {
			st.model, st.provider, restored = m, p, true
		}
	}
	if level != "" && llm.ValidThinkingLevel(level) {
		opts.ThinkingLevel = level
	}
	if restored && !opts.ForceModel {
		opts.Model = llm.ModelRef{}
	}
	if hasMode && opts.PermissionMode == "" {
		st.mode = recorded
	}
	if err := st.initSettings(opts); err != nil {
		return err
	}
	if opts.PermissionMode != "" && (!hasMode || recorded != st.mode) {
		st.announceMode = true
	}
	if opts.Model.Provider != "" && (model == nil || model.Provider != st.model.Provider || model.ID != st.model.ID) {
		st.announceModel = true
	}
	return nil
}

// SessionFile returns the path of the session file once it exists.
func (s *Session) SessionFile() (string, error) {
	return call(s, func(st *state) string { return st.filePath() })
}

// Busy reports whether a run is active.
func (s *Session) Busy() (bool, error) {
	return call(s, func(st *state) bool { return st.run != nil })
}

// Settings returns options that recreate this session's settings (cwd,
// model, thinking level, permission mode, active tools) for a new session.
func (s *Session) Settings() (Options, error) {
	return call(s, func(st *state) Options {
		o := Options{Cwd: st.cwd, ThinkingLevel: st.thinkingLevel, PermissionMode: string(st.mode), Approver: s.approver}
		if st.model != nil {
			o.Model = *modelRef(st.model)
		}
		if st.activeTools != nil {
			for name, on := range st.activeTools {
				if on {
					o.ActiveTools = append(o.ActiveTools, name)
				}
			}
		}
		return o
	})
}

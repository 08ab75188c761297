package session

import (
	"sync"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
)

// Shown are a session's settings as its events announced them: the
// values at launch, then each permission_mode_changed, model_changed
// (a fallback model while its attempt runs) and thinking_level_changed.
// A protocol that shows them (ACP's config options) reads them here
// instead of keeping its own copy.
type Shown struct {
	Mode          string
	Model         llm.ModelRef
	ThinkingLevel string
}

// shown is the session's Shown, updated by publish before the event's
// subscribers run (so they read the new value) from the actor or a
// runner, read from any goroutine.
type shown struct {
	mu sync.Mutex
	v  Shown
}

func (s *shown) note(e events.Event) {
	switch e := e.(type) { // every event passes here: no lock for the others
	case events.PermissionModeChanged:
		s.set(func(v *Shown) { v.Mode = e.Mode })
	case events.ModelChanged:
		s.set(func(v *Shown) { v.Model = e.Model })
	case events.ThinkingLevelChanged:
		s.set(func(v *Shown) { v.ThinkingLevel = e.Level })
	}
}

func (s *shown) set(f func(*Shown)) {
	s.mu.Lock()
	f(&s.v)
	s.mu.Unlock()
}

// Shown returns the session's settings as its events announced them.
// It never waits for the actor, so an event subscriber may call it.
func (s *Session) Shown() Shown {
	s.shown.mu.Lock()
	defer s.shown.mu.Unlock()
	return s.shown.v
}

// initShown takes the launch values (before the actor runs).
func (s *Session) initShown(st *state) {
	v := Shown{Mode: string(st.mode), ThinkingLevel: st.thinkingLevel}
	if st.model != nil {
		v.Model = *modelRef(st.model)
	}
	s.shown.v = v
}

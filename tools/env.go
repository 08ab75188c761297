package tools

import (
	"slices"
	"sync"

	"github.com/armadra/ama-rpc/internal/childenv"
)

// ReadTracker remembers which files were read in a session.
type ReadTracker struct {
	mu    sync.Mutex
	paths map[string]bool
}

// NewReadTracker returns an empty tracker.
func NewReadTracker() *ReadTracker { return &ReadTracker{paths: map[string]bool{}} }

// Mark records that the absolute path was read (or written by the agent).
func (r *ReadTracker) Mark(path string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.paths[path] = true
	r.mu.Unlock()
}

// Has reports whether the absolute path was read.
func (r *ReadTracker) Has(path string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paths[path]
}

// Paths returns the recorded paths, sorted.
func (r *ReadTracker) Paths() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.paths))
	for p := range r.paths {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// The environment of the commands the bash tool runs (foreground and
// background) is internal/childenv's: the server's environment without the
// model's credentials, plus git settings that keep configuration written
// into the project from running programs, plus Env.ExtraEnv.

// EnvPolicy adjusts which variables of the server's environment commands
// see (Hide: more credential variables; Pass: kept anyway).
type EnvPolicy = childenv.Policy

// CommandEnviron is the complete environment of a command: os.Environ()
// filtered by Env.EnvPolicy, the git settings and Env.ExtraEnv.
func (e *Env) CommandEnviron() []string {
	var pol EnvPolicy
	var extra []string
	if e != nil {
		pol, extra = e.EnvPolicy, e.ExtraEnv
	}
	return childenv.Environ(pol, extra...)
}

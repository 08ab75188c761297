package tools

import "sync"

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

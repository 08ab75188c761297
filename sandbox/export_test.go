package sandbox

// NewWithoutNamespaces is New with user namespaces never tried (the
// fallback of machines that forbid them).
func NewWithoutNamespaces(s Settings, self string, base Dirs) *Runtime {
	r := &Runtime{settings: s, self: self, small: findLauncher(self), base: base}
	r.status = detect(r, s.Wanted(), false)
	return r
}

// WithoutSmallLauncher is r re-executing its own binary as the launcher
// even when ama-rpc-sandbox lies next to it.
func (r *Runtime) WithoutSmallLauncher() *Runtime {
	return &Runtime{settings: r.settings, self: r.self, base: r.base, status: r.status}
}

// UsesSmallLauncher reports whether r starts ama-rpc-sandbox.
func (r *Runtime) UsesSmallLauncher() bool { return r.small != "" }

// RunCanaries runs the self-test afresh (no cache, no once).
func (r *Runtime) RunCanaries() Verification { return r.runCanaries() }

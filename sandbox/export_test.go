package sandbox

// NewWithoutNamespaces is New with user namespaces never tried (the
// fallback of machines that forbid them).
func NewWithoutNamespaces(s Settings, self string, base Dirs) *Runtime {
	return &Runtime{settings: s, self: self, base: base, status: detect(self, s.Wanted(), false)}
}

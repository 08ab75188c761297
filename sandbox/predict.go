package sandbox

import "slices"

// Predict says which of a command's statically known effects the sandbox
// would refuse (for `ama-rpc explain`): writes outside the writable trees
// or into protected paths, reads of hidden paths or of HOME entries off the
// readable list or of /dev off the device allowlist, and network use with
// the network denied. writes and reads are absolute, cleaned paths. It is
// a prediction from the command's text: effects computed at run time are
// not seen.
func (c *Command) Predict(writes, reads []string, network bool) []string {
	if c == nil {
		return nil
	}
	p := c.policy
	var out []string
	writable := p.writable()
	if p.Tmp != "" {
		writable = append(writable, p.Tmp)
		if p.Namespaces {
			writable = append(writable, "/tmp") // the private /tmp: contained, not refused
		}
	}
	for _, w := range writes {
		switch {
		case slices.Contains(p.Devices, w):
		case slices.ContainsFunc(p.Protect, func(x string) bool { return within(w, x) }):
			out = append(out, "write to protected "+w)
		case !slices.ContainsFunc(writable, func(x string) bool { return within(w, x) }):
			out = append(out, "write outside the writable trees: "+w)
		}
	}
	for _, r := range reads {
		switch {
		case slices.ContainsFunc(p.Hide, func(x string) bool { return within(r, x) }):
			out = append(out, "read of hidden "+r)
		case within(r, "/dev") && r != "/dev" && !deviceAllowed(p, r):
			out = append(out, "read of a device off the allowlist: "+r)
		case p.Home != "" && within(r, p.Home) && r != p.Home &&
			!slices.ContainsFunc(append(slices.Clone(p.HomeRead), writable...), func(x string) bool { return within(r, x) }):
			out = append(out, "read in HOME off the readable list: "+r)
		}
	}
	if network && p.DenyNetwork {
		out = append(out, "network access (denied)")
	}
	return out
}

// deviceAllowed tells whether a path in /dev opens in the sandbox: the
// device files of the policy (and what is in pts and shm) and the links
// into /proc/self/fd.
func deviceAllowed(p Policy, r string) bool {
	switch r {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr":
		return true
	}
	return within(r, "/dev/fd") || slices.ContainsFunc(p.Devices, func(d string) bool { return within(r, d) })
}

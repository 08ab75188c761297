package approvals

import "path"

// ama's own safety controls: the files that decide what the agent may do
// (config, hooks, auth, profiles, trust) and ama's working data (sessions,
// checkpoints, plans, tool outputs). Seed 003's rule: the agent never
// changes its own safety controls, whatever the tool and the mode. A write
// the pipeline can see (the write and edit tools, any other tool writing a
// path, a bash command's write and delete targets, resolved through links)
// is denied outright, before allow rules, hooks, the sandbox free pass and
// the mode; nothing lifts it. Reads of the files that can hold keys are
// secret reads (internal/secrets lists ~/.config/ama and ama's auth.json).
//
// This is the one list: the rule tier uses it, and the sandbox protects the
// same places (sandbox.ForBash hides the config directory and keeps the
// project's .ama read-only).

// SafetyHomeDirs are ama's default directories under HOME, protected even
// when AMA_CONFIG_DIR or AMA_DATA_DIR point elsewhere (another process of
// the user may use the defaults).
var SafetyHomeDirs = []string{".config/ama", safetyDataDir}

// safetyDataDir is ama's default data directory under HOME, where its API
// key file (auth.json) lives.
const safetyDataDir = ".local/share/ama"

// SafetyProjectDir is the project's ama directory (config, hooks, agent
// definitions, skills), relative to the session directory.
const SafetyProjectDir = ".ama"

// Safety are the places of this process's safety files, found at startup
// (absolute, cleaned): the user config and data directories as resolved
// (AMA_CONFIG_DIR, XDG_*), and files named from elsewhere (a profile and
// the hooks and config files it names).
type Safety struct {
	Dirs  []string
	Files []string
	// Keys are the directories and files among them that can hold API
	// keys (the resolved config directory, auth.json, profile files): a
	// read is a secret read, so auto mode asks. The defaults under HOME
	// are in internal/secrets already.
	Keys []string
}

// keyReason says why reading p (absolute, cleaned) is a secret read of
// ama's own files, or returns "".
func (s *Safety) keyReason(p string) string {
	if s == nil || p == "" {
		return ""
	}
	for _, k := range s.Keys {
		if within(p, k) {
			return "ama's configuration, which can hold API keys (" + p + ")"
		}
	}
	return ""
}

// safetyReason says why p (absolute, cleaned) is one of ama's safety files
// for a session in cwd, or returns "".
func (s *Safety) safetyReason(p, cwd, home string) string {
	if p == "" || p[0] != '/' {
		return ""
	}
	p = path.Clean(p)
	if cwd != "" && cwd != "/" && within(p, cwd+"/"+SafetyProjectDir) {
		return "the project's ama configuration (" + p + ")"
	}
	if home != "" && home != "/" {
		for _, d := range SafetyHomeDirs {
			if within(p, home+"/"+d) {
				return "ama's own configuration and data (" + p + ")"
			}
		}
	}
	if s == nil {
		return ""
	}
	for _, d := range s.Dirs {
		if within(p, d) {
			return "ama's own configuration and data (" + p + ")"
		}
	}
	for _, f := range s.Files {
		if p == f {
			return "ama's own configuration (" + p + ")"
		}
	}
	return ""
}

// safetyWrite is the deny verdict of a call that writes one of ama's
// safety files, or nil.
func safetyWrite(c *callCtx, pol *Policy) *Verdict {
	reason := ""
	switch {
	case c.isBash:
		if c.bash == nil {
			return nil
		}
		for _, list := range [][]Target{c.bash.Writes, c.bash.Deletes} {
			for _, t := range list {
				if t.Dynamic {
					if mentionsAgentConfig(t.Raw) {
						reason = "ama's own configuration (" + t.Raw + ")"
					}
				} else {
					reason = pol.Safety.safetyReason(t.Path, c.call.Cwd, c.call.Home)
				}
				if reason != "" {
					break
				}
			}
			if reason != "" {
				break
			}
		}
	case c.class != ClassRead && c.hasPath:
		for _, s := range c.spells {
			if reason = pol.Safety.safetyReason(s.path, c.call.Cwd, c.call.Home); reason != "" {
				break
			}
		}
		if reason == "" && c.pathOK {
			reason = pol.Safety.safetyReason(c.path, c.call.Cwd, c.call.Home)
		}
	}
	if reason == "" {
		return safetyKeyRead(c, pol)
	}
	return &Verdict{Decision: Deny, Layer: "safety",
		Reason: "Denied: this call would change " + reason + ". The agent never changes its own safety controls, in any mode; the user edits these files."}
}

// safetyKeyRead is the deny verdict of a file tool that reads ama's own
// API key file, or nil. The file tools run inside ama-rpc, outside any
// sandbox, and every mode allows reads, so auth.json is refused the way
// /proc/*/environ is: the key ama itself uses never reaches the model.
func safetyKeyRead(c *callCtx, pol *Policy) *Verdict {
	if c.isBash || c.class != ClassRead || !c.hasPath {
		return nil
	}
	hit := c.pathOK && pol.Safety.ownKeyFile(c.path, c.call.Home)
	for _, s := range c.spells {
		hit = hit || pol.Safety.ownKeyFile(s.path, c.call.Home)
	}
	if !hit {
		return nil
	}
	return &Verdict{Decision: Deny, Layer: "safety",
		Reason: "Denied: this call would read ama's own API key file. The agent never reads the key ama uses, in any mode."}
}

// ownKeyFile reports ama's own API key files (absolute, cleaned): auth.json
// of the data directory at its default place under home and as resolved
// (Safety.Keys).
func (s *Safety) ownKeyFile(p, home string) bool {
	if p == "" {
		return false
	}
	if home != "" && home != "/" && p == path.Join(home, safetyDataDir, "auth.json") {
		return true
	}
	if s != nil {
		for _, k := range s.Keys {
			if p == k && path.Base(k) == "auth.json" {
				return true
			}
		}
	}
	return false
}

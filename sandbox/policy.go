package sandbox

import (
	"path/filepath"
	"slices"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// Policy is what one sandboxed command may do. It is declarative: the
// launcher expands it into Landlock rules at each start, so entries that
// appear later (a new file in the home directory) are judged at the next
// start.
type Policy struct {
	// Write are the writable trees (directories) and files.
	Write []string `json:"write,omitempty"`
	// Protect stay read-only although they lie inside a Write tree
	// (.git/hooks, .git/config, .ama). Missing entries stay uncreatable
	// only where the mechanism can guarantee it (see README "Sandbox").
	Protect []string `json:"protect,omitempty"`
	// Pin are directories that hold protected paths; with namespaces they
	// become (writable) mount points so they cannot be renamed away and
	// replaced (mv .git .old && mkdir -p .git/hooks).
	Pin []string `json:"pin,omitempty"`
	// Hide are unreadable (credentials); everything else is readable.
	Hide []string `json:"hide,omitempty"`
	// Devices are device files that may be opened for writing.
	Devices []string `json:"devices,omitempty"`
	// DenyNetwork refuses TCP bind and connect (and, with namespaces, any
	// network outside an empty loopback-less namespace).
	DenyNetwork bool `json:"denyNetwork,omitempty"`
	// ReadOnly is set for plan mode: nothing but the devices is writable.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Namespaces tells the launcher it was started in fresh user and mount
	// namespaces (set by Wrap, not by ForBash).
	Namespaces bool `json:"namespaces,omitempty"`
}

// HiddenHomePaths are the credential paths under HOME that sandboxed
// commands cannot read: the one list in internal/secrets, shared with
// auto mode's rule tier.
var HiddenHomePaths = secrets.HomePaths

// ProtectedProjectPaths stay read-only inside the project.
var ProtectedProjectPaths = []string{".git/hooks", ".git/config", ".ama"}

// DevicePaths may be written by sandboxed commands.
var DevicePaths = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"}

// Dirs are the directories a policy is built from.
type Dirs struct {
	Project string // session directory (the project root)
	Home    string
	Temp    string // os.TempDir()
	// Output is ama's tool output directory of the session (background
	// job logs, cut outputs); may be empty. It is NOT writable by
	// sandboxed commands: ama-rpc writes it through descriptors it holds
	// (internal/ownfs), and a command that could write it could swap a log
	// for a link that ama-rpc then reads (issue 24).
	Output string
	// Config is ama's user config directory (hidden) and Data its data
	// directory (its auth.json is hidden); may be empty.
	Config string
	Data   string
}

// ForBash builds the policy of a bash call. readOnly (plan mode) leaves
// nothing writable but the device files.
func ForBash(s Settings, d Dirs, readOnly bool) Policy {
	p := Policy{DenyNetwork: s.NetworkDenied, ReadOnly: readOnly, Devices: slices.Clone(DevicePaths)}
	add := func(list *[]string, v string) {
		if v == "" || !filepath.IsAbs(v) {
			return
		}
		v = filepath.Clean(v)
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	if !readOnly {
		add(&p.Write, d.Project)
		add(&p.Write, d.Temp)
		for _, w := range s.Writable {
			add(&p.Write, w)
		}
	}
	if d.Project != "" {
		for _, rel := range ProtectedProjectPaths {
			add(&p.Protect, filepath.Join(d.Project, rel))
		}
		add(&p.Pin, filepath.Join(d.Project, ".git"))
	}
	if d.Home != "" {
		for _, rel := range HiddenHomePaths {
			add(&p.Hide, filepath.Join(d.Home, rel))
		}
	}
	add(&p.Hide, d.Config)
	if d.Data != "" {
		add(&p.Hide, filepath.Join(d.Data, "auth.json"))
	}
	return p
}

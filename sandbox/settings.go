package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/armadra/ama-rpc/config"
)

// ErrInvalidSettings wraps unusable user-level sandbox settings.
var ErrInvalidSettings = errors.New("invalid sandbox settings")

// Settings are the resolved sandbox settings of the process.
type Settings struct {
	// Enabled is false when sandbox.enabled is "off" or AMA_SANDBOX=off.
	Enabled bool
	// Bash is sandbox.bash == "auto": run bash through the sandbox.
	Bash bool
	// NetworkDenied is sandbox.network == "deny" (the default).
	NetworkDenied bool
	// Writable are the extra writable paths (absolute, cleaned, unique).
	Writable []string
}

// Wanted reports whether bash should run sandboxed (if the kernel allows).
func (s Settings) Wanted() bool { return s.Enabled && s.Bash }

// Resolve merges the user and project settings. The project layer is
// checked into the repository, so it may only tighten: network "deny" is
// accepted, everything else under "sandbox" is ignored with a warning
// (turning bash sandboxing on would make commands approval-free, turning it
// off would run them bare, writable widens). envSwitch is the value of
// AMA_SANDBOX ("off" disables the sandbox). home expands ~.
func Resolve(user, project config.Sandbox, envSwitch, home string) (Settings, []string, error) {
	var warns []string
	s := Settings{Enabled: true, NetworkDenied: true}
	switch strings.TrimSpace(user.Enabled) {
	case "", "auto":
	case "off":
		s.Enabled = false
	default:
		return s, nil, fmt.Errorf("%w: sandbox.enabled must be auto or off, not %q", ErrInvalidSettings, user.Enabled)
	}
	switch strings.TrimSpace(envSwitch) {
	case "", "auto":
	case "off":
		s.Enabled = false
	default:
		warns = append(warns, fmt.Sprintf("AMA_SANDBOX=%q is not off or auto; ignored", envSwitch))
	}
	switch strings.TrimSpace(user.Bash) {
	case "", "off":
	case "auto":
		s.Bash = true
	default:
		return s, nil, fmt.Errorf("%w: sandbox.bash must be auto or off, not %q", ErrInvalidSettings, user.Bash)
	}
	switch strings.TrimSpace(user.Network) {
	case "", "deny":
	case "allow":
		s.NetworkDenied = false
	default:
		return s, nil, fmt.Errorf("%w: sandbox.network must be deny or allow, not %q", ErrInvalidSettings, user.Network)
	}
	for _, w := range user.Writable {
		p, ok := expandHome(w, home)
		if !ok {
			warns = append(warns, fmt.Sprintf("sandbox.writable entry %q is not absolute (or ~/…); ignored", w))
			continue
		}
		if !slices.Contains(s.Writable, p) {
			s.Writable = append(s.Writable, p)
		}
	}

	// The project layer: only network "deny".
	switch n := strings.TrimSpace(project.Network); n {
	case "":
	case "deny":
		s.NetworkDenied = true
	default:
		warns = append(warns, fmt.Sprintf("project sandbox.network %q ignored: the project configuration may only deny the network", n))
	}
	if project.Bash != "" {
		warns = append(warns, fmt.Sprintf("project sandbox.bash %q ignored: only the user configuration may turn bash sandboxing on or off", project.Bash))
	}
	if project.Enabled != "" {
		warns = append(warns, fmt.Sprintf("project sandbox.enabled %q ignored: only the user configuration may set it", project.Enabled))
	}
	if len(project.Writable) > 0 {
		warns = append(warns, fmt.Sprintf("project sandbox.writable ignored (%d entries): only the user configuration may widen the sandbox", len(project.Writable)))
	}
	return s, warns, nil
}

// expandHome makes p absolute: ~ and ~/… expand to home; relative paths
// are refused.
func expandHome(p, home string) (string, bool) {
	p = strings.TrimSpace(p)
	switch {
	case p == "~":
		p = home
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(home, p[2:])
	}
	if !filepath.IsAbs(p) || (strings.HasPrefix(p, "~") && home == "") {
		return "", false
	}
	return filepath.Clean(p), true
}

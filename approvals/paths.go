package approvals

import (
	"path"
	"strings"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// All path judgements in this package are lexical: paths are cleaned
// (duplicate slashes, "." and ".." removed) but never looked up, so they
// need not exist and symlinks are not followed.

// joinPath resolves p against dir and cleans the result. It fails when p is
// relative and dir is unknown ("").
func joinPath(dir, p string) (string, bool) {
	switch {
	case p == "":
		if dir == "" {
			return "", false
		}
		return dir, true
	case p[0] == '/':
		return path.Clean(p), true
	case dir == "":
		return "", false
	}
	return path.Clean(dir + "/" + p), true
}

// joinRaw joins p to dir without cleaning ("" when p is relative and dir
// unknown).
func joinRaw(dir, p string) string {
	switch {
	case p != "" && p[0] == '/':
		return p
	case dir == "":
		return ""
	case p == "":
		return dir
	}
	return dir + "/" + p
}

// cleanDir cleans an absolute directory; anything else becomes unknown.
func cleanDir(d string) string {
	if d == "" || d[0] != '/' {
		return ""
	}
	return path.Clean(d)
}

// resolveToolPath turns the path argument of a file tool into an absolute,
// cleaned path. It understands file:// URLs, a leading ~ and the $HOME,
// ${HOME}, $PWD and ${PWD} prefixes (lesson 6). An empty path means the
// working directory.
func resolveToolPath(p, cwd, home string) (string, bool) {
	p = strings.TrimPrefix(p, "file://")
	for _, v := range [...]struct{ prefix, value string }{
		{"${HOME}", home}, {"$HOME", home}, {"${PWD}", cwd}, {"$PWD", cwd}, {"~", home},
	} {
		rest, ok := strings.CutPrefix(p, v.prefix)
		if !ok || (rest != "" && rest[0] != '/') {
			continue
		}
		if v.value == "" {
			return "", false
		}
		p = v.value + rest
		break
	}
	return joinPath(cwd, p)
}

// within reports whether p is root or lies below it.
func within(p, root string) bool { return secrets.Within(p, root) }

// strictlyWithin reports whether p lies below root (root itself excluded).
func strictlyWithin(p, root string) bool { return p != root && within(p, root) }

// hasComponent reports whether one of the slash-separated components of p
// equals name (ignoring case).
func hasComponent(p, name string) bool { return secrets.HasComponent(p, name) }

// isDeviceSink reports the output devices that are never treated as writes.
func isDeviceSink(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	return false
}

// secretReason says why an absolute path holds secrets, or returns "" (the
// one list is internal/secrets).
func secretReason(p string) string { return secrets.Reason(p) }

// privateSecretReason is secretReason with ama's private places
// (Policy.Private) counted as secrets.
func privateSecretReason(p string, private []string) string {
	if r := secrets.Reason(p); r != "" {
		return r
	}
	return secrets.PrivateReason(p, private)
}

// globSecretReason judges an argument that still contains glob characters.
func globSecretReason(word string) string { return secrets.GlobReason(word) }

// protectedWriteReason says why writing p needs approval in auto mode, or
// returns "". root is the project root ("" = unknown, so everything is
// outside).
func protectedWriteReason(p, root string) string {
	if isDeviceSink(p) {
		return ""
	}
	if r := secretReason(p); r != "" {
		return "writes " + r
	}
	if hasComponent(p, ".git") {
		return "writes inside a .git directory (" + p + ")"
	}
	if !within(p, root) {
		return "writes outside the project directory (" + p + ")"
	}
	if within(p, root+"/.ama") {
		return "writes the project's .ama configuration (" + p + ")"
	}
	for _, c := range secrets.AgentConfigPaths {
		if within(p, root+"/"+c) {
			return "writes an external agent's project settings, which can run programs outside the sandbox (" + p + ")"
		}
	}
	return ""
}

// agentConfigPath reports the agent's own configuration and safety files:
// the user configuration directory ~/.config/ama and the project's .ama
// directory.
func agentConfigPath(p, cwd, home string) bool {
	return (home != "" && within(p, home+"/.config/ama")) ||
		(cwd != "" && cwd != "/" && within(p, cwd+"/.ama"))
}

// mentionsAgentConfig reports whether free text (an interpreter script, a
// sed expression) names one of the agent's configuration locations.
func mentionsAgentConfig(s string) bool {
	if strings.Contains(s, ".config/ama") || strings.Contains(s, "XDG_CONFIG_HOME}/ama") ||
		strings.Contains(s, "XDG_CONFIG_HOME/ama") {
		return true
	}
	for i := 0; ; {
		j := strings.Index(s[i:], ".ama")
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || strings.IndexByte(" \t\n'\"=/:(<>", s[j-1]) >= 0
		end := j + len(".ama")
		after := end == len(s) || strings.IndexByte("/ \t\n'\")", s[end]) >= 0
		if before && after {
			return true
		}
		i = end
	}
}

// systemRoots are directories whose recursive deletion (or deletion of
// anything below them) is a hard stop.
var systemRoots = []string{
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
	"/Library", "/private", "/proc", "/root", "/run", "/sbin", "/sys", "/System",
	"/usr", "/var", "/opt", "/srv", "/mnt", "/media", "/nix", "/snap",
	"/Users", "/Applications", "/Volumes",
}

// tempRoots are scratch areas: their subtrees may be deleted, the roots
// themselves may not.
var tempRoots = []string{
	"/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp", "/dev/shm",
	"/var/folders", "/private/var/folders",
}

func isSystemRoot(p string) bool {
	for _, r := range systemRoots {
		if p == r {
			return true
		}
	}
	return false
}

// projectIsExempt reports whether subtrees of the project directory may be
// deleted recursively without a hard stop: not when the project directory is
// itself /, a system root, HOME or an ancestor of HOME.
func projectIsExempt(cwd, home string) bool {
	return cwd != "" && cwd != "/" && !isSystemRoot(cwd) && !(home != "" && within(home, cwd))
}

// systemDeleteReason says why recursively deleting p is a hard stop, or
// returns "". HOME subtrees, temporary subtrees and project subtrees are
// exempt; /, HOME, ancestors of HOME, temp roots and system directories are
// not.
func systemDeleteReason(p, cwd, home string) string {
	switch {
	case p == "/":
		return "the file system root /"
	case home != "" && p == home:
		return "the home directory " + p
	case home != "" && strictlyWithin(home, p):
		return "an ancestor of the home directory (" + p + ")"
	}
	for _, t := range tempRoots {
		if p == t {
			return "the temporary-files root " + p
		}
		if strictlyWithin(p, t) {
			return ""
		}
	}
	if home != "" && strictlyWithin(p, home) {
		return ""
	}
	if projectIsExempt(cwd, home) && strictlyWithin(p, cwd) {
		return ""
	}
	for _, r := range systemRoots {
		if within(p, r) {
			return "the system directory " + p
		}
	}
	return ""
}

// shellProfileNames are startup files read by interactive or login shells.
var shellProfileNames = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true,
	".profile": true, ".zshrc": true, ".zshenv": true, ".zprofile": true, ".zlogin": true,
	".zlogout": true, ".kshrc": true, ".mkshrc": true, ".cshrc": true, ".tcshrc": true,
	".login": true, ".inputrc": true,
}

// shellProfileReason reports writes to shell startup files of the user
// (directly in HOME, or fish's config) or of the system (/etc).
func shellProfileReason(p, home string) string {
	base := path.Base(p)
	dir := path.Dir(p)
	switch {
	case home != "" && dir == home && shellProfileNames[base]:
		return "modifies the shell startup file " + p
	case home != "" && within(p, home+"/.config/fish"):
		return "modifies the fish shell configuration " + p
	case p == "/etc/profile" || within(p, "/etc/profile.d") || p == "/etc/bash.bashrc" ||
		p == "/etc/bashrc" || p == "/etc/zshrc" || p == "/etc/zsh/zshrc" || p == "/etc/environment":
		return "modifies the system shell startup file " + p
	}
	return ""
}

// persistenceTargetReason reports writes that install something that runs
// later on its own (cron tables, launch agents, systemd units, autostart).
func persistenceTargetReason(p, home string) string {
	switch {
	case within(p, "/etc/cron.d") || within(p, "/etc/cron.daily") || within(p, "/etc/cron.hourly") ||
		within(p, "/etc/cron.weekly") || within(p, "/etc/cron.monthly") || p == "/etc/crontab" ||
		within(p, "/var/spool/cron") || within(p, "/etc/systemd") || within(p, "/Library/LaunchAgents") ||
		within(p, "/Library/LaunchDaemons"):
		return "installs a scheduled or startup job (" + p + ")"
	case home != "" && (within(p, home+"/Library/LaunchAgents") || within(p, home+"/.config/systemd") ||
		within(p, home+"/.config/autostart")):
		return "installs a scheduled or startup job (" + p + ")"
	}
	return ""
}

// chmodSystemReason reports permission or owner changes under system or
// credential directories.
func chmodSystemReason(p, home string) string {
	if p == "/" {
		return "changes permissions of /"
	}
	for _, r := range [...]string{"/etc", "/usr", "/bin", "/sbin", "/System", "/lib", "/boot"} {
		if within(p, r) {
			return "changes permissions or ownership under " + r
		}
	}
	if home != "" && within(p, home+"/.ssh") {
		return "changes permissions or ownership under ~/.ssh"
	}
	return ""
}

// systemFileRoots hold the operating system's programs and configuration.
var systemFileRoots = []string{
	"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
	"/System", "/Library", "/sys", "/proc", "/root", "/var/spool",
}

// systemWriteReason reports writes into system directories (/etc/passwd,
// /usr/local/bin/x, ...).
func systemWriteReason(p string) string {
	for _, r := range systemFileRoots {
		if within(p, r) {
			return "writes into the system directory " + r + " (" + p + ")"
		}
	}
	return ""
}

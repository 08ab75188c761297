package sandbox

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// unixSocketTable lists the bound Unix sockets of this network namespace
// (the kernel's own list: every listening pathname socket of the machine's
// daemons and agents, wherever it lies).
const unixSocketTable = "/proc/net/unix"

// pathSockets returns the pathname Unix sockets a sandboxed command could
// connect(2) to outside the sandbox: those the kernel lists as bound in
// this network namespace (unixSocketTable) and those named by the
// command's environment (SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS's
// unix:path=, DOCKER_HOST's unix://, WAYLAND_DISPLAY below
// XDG_RUNTIME_DIR, …: any value, or part of one, that is the absolute path
// of a socket). Only paths that are sockets now are returned, sorted; the
// jail covers each with a read-only /dev/null (a read-only mount does not
// refuse connect, a device file does), so the service behind it cannot be
// reached. A name that is a symbolic link counts for the socket it leads
// to (the jail covers the target, so connecting through the link fails
// too). Sockets below the private temp and cache directories are the
// sandbox's own and are left alone.
func pathSockets(table []byte, env []string, own ...string) []string {
	var cands []string
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for first := true; sc.Scan(); first = false {
		if first {
			continue // the header
		}
		// Num RefCount Protocol Flags Type St Inode Path
		f := strings.Fields(sc.Text())
		if len(f) >= 8 && strings.HasPrefix(f[7], "/") {
			cands = append(cands, f[7])
		}
	}
	runtimeDir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_RUNTIME_DIR="); ok {
			runtimeDir = v
		}
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "WAYLAND_DISPLAY" && runtimeDir != "" && v != "" && !strings.HasPrefix(v, "/") {
			cands = append(cands, filepath.Join(runtimeDir, v))
		}
		for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == ':' || r == '=' }) {
			part = strings.TrimPrefix(part, "//") // unix:///run/docker.sock
			if strings.HasPrefix(part, "/") {
				cands = append(cands, part)
			}
		}
	}
	// Each name is looked at once (this runs before every command):
	// one stat, and only a link that leads to a socket is resolved.
	seen := make(map[string]bool, len(cands))
	var out []string
	for _, c := range cands {
		c = filepath.Clean(c)
		if seen[c] {
			continue
		}
		seen[c] = true
		fi, err := os.Lstat(c)
		if err == nil && fi.Mode().Type() == fs.ModeSymlink {
			if fi, err = os.Stat(c); err == nil && fi.Mode().Type() == fs.ModeSocket {
				c, err = filepath.EvalSymlinks(c)
			}
		}
		if err != nil || fi.Mode().Type() != fs.ModeSocket || slices.Contains(out, c) ||
			slices.ContainsFunc(own, func(o string) bool { return o != "" && within(c, o) }) {
			continue
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// jailSockets are the sockets the jail of p covers for a launcher whose
// commands have the given environments (the one place they are found:
// the per-call Wrap passes the command's, the pre-started launcher its own
// and the command's).
func jailSockets(p Policy, envs ...[]string) []string {
	var env []string
	for _, e := range envs {
		env = append(env, e...)
	}
	return pathSockets(readUnixSocketTable(), env, p.Tmp, p.Cache)
}

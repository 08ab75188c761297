//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/armadra/ama-rpc/internal/childenv"
)

// capSysAdmin is CAP_SYS_ADMIN; the launcher keeps it (inside its own user
// namespace only) just long enough to make the bind mounts read-only.
const capSysAdmin = 21

// detect reads the Landlock ABI and, when probe is set, starts `true`
// through the launcher: first with namespaces (when allowNS), then without.
func detect(self string, probe, allowNS bool) Status {
	st := Status{Mechanism: "none"}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		st.Detail = "Landlock is not available in this kernel (" + err.Error() + ")"
		return st
	}
	st.ABI = abi
	if abi < minABI {
		st.Detail = fmt.Sprintf("Landlock ABI %d is too old (need %d or newer, Linux 6.2+)", abi, minABI)
		return st
	}
	st.Mechanism = "landlock"
	if !probe {
		st.Available = true
		st.NetworkIsolation = abi >= 4
		return st
	}
	tmp := os.TempDir()
	pol := Policy{Write: []string{tmp}, Devices: DevicePaths, DenyNetwork: true}
	var errs []string
	modes := []bool{true, false}
	if !allowNS {
		modes = modes[1:]
	}
	for _, ns := range modes {
		r := &Runtime{self: self, status: Status{Namespaces: ns}}
		if err := runProbe(r, pol); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		st.Available, st.Namespaces = true, ns
		st.NetworkIsolation = ns || abi >= 4
		if !ns {
			why := "not tried"
			if len(errs) > 0 {
				why = errs[0]
			}
			st.Detail = "no user namespaces (" + why + "): .git/hooks, .git/config and .ama are protected by leaving the project root itself read-only"
		}
		return st
	}
	st.Detail = "the sandbox launcher failed: " + strings.Join(errs, "; ")
	return st
}

func runProbe(r *Runtime, pol Policy) error {
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, truePath)
	cmd.Env = childenv.Environ(childenv.Policy{})
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	release, err := r.wrap(cmd, pol)
	if err != nil {
		return err
	}
	err = cmd.Start()
	release()
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		if s := strings.TrimSpace(stderr.String()); s != "" {
			return fmt.Errorf("%w: %s", err, s)
		}
		return err
	}
	return nil
}

// setupProc adds the namespaces to the launcher's start.
func setupProc(cmd *exec.Cmd, p Policy) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !p.Namespaces {
		return nil
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	if p.DenyNetwork {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	a.AmbientCaps = []uintptr{capSysAdmin}
	return nil
}

// newRuleset builds the Landlock ruleset of a policy (not enforced: the
// launcher enforces it) and returns it as a file with the
// landlock_restrict_self flags.
func newRuleset(p Policy) (*os.File, uint32, error) {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < minABI {
		return nil, 0, fmt.Errorf("Landlock ABI %d is not usable (%v)", abi, err)
	}
	cfg := landlock.Config{
		HandledAccessFS: fsAll,
		Scoped:          landlock.ScopedSet(ll.ScopeAbstractUnixSocket | ll.ScopeSignal),
	}
	if p.DenyNetwork {
		if abi < 4 && !p.Namespaces {
			return nil, 0, fmt.Errorf("cannot deny the network: Landlock ABI %d has no TCP rules and there are no network namespaces", abi)
		}
		cfg.HandledAccessNet = landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
	}
	// Best effort only downgrades what the kernel lacks beyond the checks
	// above (minABI, TCP rules): rights newer than its ABI (ioctl on
	// devices before ABI 5, IPC scoping before 6), which such kernels do
	// not restrict at all.
	fd, flags, err := cfg.BestEffort().NewRulesetFD(buildRules(p)...)
	if err != nil {
		return nil, 0, fmt.Errorf("build the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return nil, 0, errors.New("the Landlock ruleset is empty")
	}
	return os.NewFile(uintptr(fd), "landlock-ruleset"), flags, nil
}

// Access rights.
const (
	fsAll      = landlock.AccessFSSet(1<<16 - 1) // every right up to ABI 5 (ioctl_dev)
	fsFile     = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev)
	fsRead     = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir)
	fsReadFile = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSReadFile)
	fsListDir  = landlock.AccessFSSet(ll.AccessFSReadDir)
)

// buildRules expands the policy: read everywhere except the hidden paths,
// write in the writable trees except hidden (and, without namespaces,
// protected) paths, and the device files.
func buildRules(p Policy) []landlock.Rule {
	hide := realPaths(p.Hide)
	var rules []landlock.Rule
	grant(&rules, "/", hide, fsRead, fsListDir)
	noWrite := hide
	if !p.Namespaces {
		noWrite = append(append([]string(nil), hide...), realPaths(p.Protect)...)
	}
	if !p.ReadOnly {
		for _, w := range realPaths(p.Write) {
			if _, err := os.Stat(w); err != nil {
				continue
			}
			grant(&rules, w, noWrite, fsAll, 0)
		}
	}
	for _, d := range p.Devices {
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			rules = append(rules, landlock.PathAccess(fsAll, d).IgnoreIfMissing())
		} else {
			rules = append(rules, landlock.PathAccess(fsFile, d).IgnoreIfMissing())
		}
	}
	return rules
}

// grant gives rights on the tree at root minus the excluded paths. Landlock
// rights are inherited by a whole tree, so a directory above an excluded
// path only gets dirOnly (may be 0) and each of its entries is granted in
// turn; entries are listed now, at the start of the command.
func grant(rules *[]landlock.Rule, root string, excluded []string, rights, dirOnly landlock.AccessFSSet) {
	switch relation(root, excluded) {
	case excludedPath:
		return
	case clear:
		add(rules, root, rights)
		return
	}
	if dirOnly != 0 {
		*rules = append(*rules, landlock.PathAccess(dirOnly, root).IgnoreIfMissing())
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return // fail closed: nothing below is granted
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			// A link is granted as its target, unless the target is or
			// holds an excluded path (a link to ~/.ssh, or to /).
			t, err := filepath.EvalSymlinks(p)
			if err != nil || relation(t, excluded) != clear {
				continue
			}
			add(rules, t, rights)
			continue
		}
		grant(rules, p, excluded, rights, dirOnly)
	}
}

func add(rules *[]landlock.Rule, p string, rights landlock.AccessFSSet) {
	fi, err := os.Stat(p)
	if err != nil {
		return
	}
	if fi.IsDir() {
		*rules = append(*rules, landlock.PathAccess(rights, p).IgnoreIfMissing())
	} else if r := rights & fsFile; r != 0 {
		*rules = append(*rules, landlock.PathAccess(r, p).IgnoreIfMissing())
	}
}

const (
	clear = iota
	excludedPath
	aboveExcluded
)

// relation tells whether p is excluded, lies above an excluded path, or is
// clear of all of them.
func relation(p string, excluded []string) int {
	out := clear
	for _, x := range excluded {
		switch {
		case p == x || strings.HasPrefix(p, x+"/") || x == "/":
			return excludedPath
		case p == "/" || strings.HasPrefix(x, p+"/"):
			out = aboveExcluded
		}
	}
	return out
}

// realPaths resolves symbolic links so the paths match the directory walk;
// a missing path is resolved as far as it exists. Both the given and the
// resolved form are kept.
func realPaths(ps []string) []string {
	var out []string
	for _, p := range ps {
		p = filepath.Clean(p)
		out = append(out, p)
		if r := realish(p); r != p {
			out = append(out, r)
		}
	}
	return out
}

func realish(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	dir = filepath.Clean(dir)
	if dir == p {
		return p
	}
	return filepath.Join(realish(dir), base)
}

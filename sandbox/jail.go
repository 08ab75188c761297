package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/armadra/ama-rpc/sandbox/launcher"
)

// jailPlan is the launcher's mount plan for p (package launcher, Op*), run
// in fresh user, mount, PID and IPC namespaces:
//
//  1. detached copies of the writable trees, the session's temp dir, the
//     readable HOME entries (read-only) and the pinned .git are taken;
//  2. every mount is made read-only (chmod, utime and xattr changes fail
//     with EROFS outside the writable trees);
//  3. /dev becomes a /dev of the jail's own: only the allowed device nodes
//     of the host (DeviceNodes), a new devpts instance (the user's
//     terminals are not in it) with ptmx, an empty /dev/shm and the
//     /proc/self/fd links; the session's temp dir is mounted on /tmp, and
//     HOME an empty tmpfs holding only the readable entries;
//  4. hidden paths and writable trees are mounted shallowest first (a
//     hidden directory that holds a writable tree, like ama's data
//     directory holding the session's output directory, becomes an empty
//     tmpfs with just that tree in it), with them the directories leading
//     from a writable tree to the project, pinned;
//  5. the pathname Unix sockets of daemons and agents (Policy.Sockets)
//     are covered by a read-only /dev/null each (connect fails);
//  6. .git is pinned (a mount point cannot be renamed or replaced), the
//     missing protected directories are created empty and the missing
//     protected files with content that changes nothing (commondir "."),
//     and the protected paths are bound read-only;
//  7. a new /proc shows only the sandbox's processes; the tmpfs layers are
//     sealed read-only.
//
// It stats paths (whether HOME exists, whether .git is a file), so it runs
// at each start, and before each command through a pre-started launcher
// (its key): the operands are quoted in place, one buffer for the plan.
func jailPlan(p Policy, pidNS bool) string {
	b := make([]byte, 0, 8<<10)
	op := func(name string, args ...string) {
		b = append(b, name...)
		for _, a := range args {
			b = append(b, ' ')
			b = strconv.AppendQuote(b, a)
		}
		b = append(b, '\n')
	}
	writes := p.writable()
	op(launcher.OpPrivate)
	for i, w := range writes {
		op(launcher.OpClone, "w"+strconv.Itoa(i), w)
	}
	if p.Tmp != "" {
		op(launcher.OpClone, "tmp", p.Tmp)
	}
	if p.ReadOnly && p.Project != "" {
		op(launcher.OpCloneRO, "project", p.Project)
	}
	home := p.Home != "" && isDir(p.Home)
	if home {
		// Only the entries that exist now (one lstat each here is cheaper
		// than a failed clone in the launcher).
		var present []string
		for _, h := range p.HomeRead {
			if _, err := os.Lstat(h); err == nil {
				present = append(present, h)
			}
		}
		p.HomeRead = present
		for i, h := range p.HomeRead {
			op(launcher.OpCloneRO, "h"+strconv.Itoa(i), h)
		}
	}
	pins := !p.ReadOnly
	if pins {
		for i, pin := range p.Pin {
			op(launcher.OpClone, "p"+strconv.Itoa(i), pin)
		}
	}
	op(launcher.OpReadOnlyAll, "/")
	var seal []string
	// A /dev of its own, before anything is covered with its /dev/null.
	op(launcher.OpDev, deviceNames...)
	if p.Tmp != "" && isDir("/tmp") {
		op(launcher.OpAttach, "tmp", "/tmp")
	}
	if home { // after /tmp: a HOME below /tmp (tests) is then made in the private /tmp
		op(launcher.OpTmpfs, p.Home, "0755")
		seal = append(seal, p.Home)
		for i, h := range p.HomeRead {
			op(launcher.OpAttach, "h"+strconv.Itoa(i), h)
		}
	}
	type item struct {
		path string
		id   string // clone id of a writable tree; "" for a hidden path
	}
	var items []item
	for i, w := range writes {
		items = append(items, item{w, "w" + strconv.Itoa(i)})
	}
	if pins {
		// The directories leading from a writable tree to the project
		// are attached in depth order with the trees: after the tree
		// that holds them, before the project they hold.
		for i, pin := range p.Pin {
			if holdsProject(p, pin) {
				items = append(items, item{pin, "p" + strconv.Itoa(i)})
			}
		}
	}
	for _, h := range p.Hide {
		items = append(items, item{path: h})
	}
	if p.ReadOnly && p.Project != "" {
		items = append(items, item{p.Project, "project"})
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if d := strings.Count(a.path, "/") - strings.Count(b.path, "/"); d != 0 {
			return d
		}
		if (a.id == "") != (b.id == "") { // the same depth: hide after write
			if a.id == "" {
				return 1
			}
			return -1
		}
		return 0
	})
	for _, it := range items {
		switch {
		case it.id != "":
			op(launcher.OpAttach, it.id, it.path)
		case slices.ContainsFunc(writes, func(w string) bool { return w != it.path && within(w, it.path) }):
			op(launcher.OpTmpfs, it.path, "0755")
			seal = append(seal, it.path)
		default:
			kind := ""
			if fi, err := os.Stat(it.path); err == nil {
				kind = "file"
				if fi.IsDir() {
					kind = "dir"
				}
			}
			op(launcher.OpHide, it.path, kind)
		}
	}
	// Sockets last among the hidden paths: one in a writable tree is
	// covered in the tree's mount.
	for _, s := range p.Sockets {
		op(launcher.OpHide, s, "")
	}
	if pins {
		for i, pin := range p.Pin {
			if holdsProject(p, pin) {
				continue // attached with the writable trees
			}
			op(launcher.OpAttach, "p"+strconv.Itoa(i), pin)
			if fi, err := os.Lstat(pin); err == nil && !fi.IsDir() {
				op(launcher.OpRO, pin) // a .git file (gitdir: …) is config
			}
		}
		for _, c := range p.Create {
			op(launcher.OpMkdir, c)
		}
		for _, f := range p.Placeholders {
			content := ""
			if p.Project != "" {
				if rel, err := filepath.Rel(p.Project, f); err == nil {
					content = PlaceholderFiles[rel]
				}
			}
			op(launcher.OpPlaceholder, f, content)
		}
	}
	for _, pr := range p.Protect {
		op(launcher.OpRO, pr)
	}
	// Trees below /tmp hang in the private /tmp on directories made for
	// them: those are read-only (a write beside the project fails).
	if p.Tmp != "" {
		var tops []string
		for _, t := range append(append(slices.Clone(writes), p.HomeRead...), p.Home, p.Project) {
			rest, ok := strings.CutPrefix(t, "/tmp/")
			first, _, deeper := strings.Cut(rest, "/")
			if ok && deeper && !slices.Contains(tops, "/tmp/"+first) {
				tops = append(tops, "/tmp/"+first)
			}
		}
		for _, t := range tops {
			op(launcher.OpSealScaffold, t)
		}
	}
	if pidNS {
		op(launcher.OpProc)
	}
	for _, s := range seal {
		op(launcher.OpSeal, s)
	}
	return string(b)
}

// writable are the trees a command may write, shallowest first: the
// granted trees (none in plan mode) and the sandbox's cache.
func (p Policy) writable() []string {
	var out []string
	if !p.ReadOnly {
		out = append(out, p.Write...)
	}
	if p.Cache != "" && !slices.Contains(out, p.Cache) {
		out = append(out, p.Cache)
	}
	slices.SortStableFunc(out, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	return out
}

// holdsProject reports whether a pinned directory lies between a writable
// tree and the project (an ancestor of the project).
func holdsProject(p Policy, pin string) bool {
	return p.Project != "" && pin != p.Project && within(p.Project, pin)
}

// deviceNames are DeviceNodes as OpDev's operands (names in /dev).
var deviceNames = func() []string {
	var out []string
	for _, d := range DeviceNodes {
		out = append(out, strings.TrimPrefix(d, "/dev/"))
	}
	return out
}()

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

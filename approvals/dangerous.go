package approvals

import (
	"path"
	"regexp"
	"strings"
)

// DangerMatch is one hit of the dangerous-command list.
type DangerMatch struct {
	ID     string `json:"id"`
	Reason string `json:"reason"` // English, for previews and the model
}

// Dangerous-list identifiers. The first group restates the reference list,
// the second the deterministic hard-deny categories, the third what this
// analyser adds for commands it cannot see through.
const (
	DangerRmRfRoot         = "rm-rf-root"
	DangerSudo             = "sudo"
	DangerSu               = "su"
	DangerDd               = "dd"
	DangerMkfs             = "mkfs"
	DangerWriteBlockDevice = "write-block-device"
	DangerGitPushForce     = "git-push-force"
	DangerGitResetHard     = "git-reset-hard"
	DangerGitCleanForce    = "git-clean-force"
	DangerGitBranchDelete  = "git-branch-force-delete"
	DangerPipeToShell      = "pipe-to-shell"
	DangerChmod777         = "chmod-777-recursive"
	DangerKillAll          = "kill-all"
	DangerForkBomb         = "fork-bomb"
	DangerPackagePublish   = "package-publish"
	DangerDockerPruneAll   = "docker-system-prune-all"
	DangerShutdown         = "shutdown-reboot"
	DangerNestedTooDeep    = "nested-too-deep"
	DangerRmSystem         = "rm-recursive-system"
	DangerFindDeleteSystem = "find-delete-system"
	DangerChmodSystem      = "chmod-system"
	DangerShellProfile     = "shell-profile-write"
	DangerAuthorizedKeys   = "authorized-keys-write"
	DangerAgentConfig      = "agent-config-write"
	DangerTLS              = "tls-weakening"
	DangerPersistence      = "persistence"
	DangerPlatformSecurity = "platform-security"
	DangerSystemWrite      = "system-file-write"
	DangerRmDynamic        = "rm-recursive-dynamic"
	DangerOpaque           = "opaque-command"
	DangerUnparsable       = "unparsable"
)

// DangerIDs lists every identifier the analyser can report.
var DangerIDs = []string{
	DangerRmRfRoot, DangerSudo, DangerSu, DangerDd, DangerMkfs, DangerWriteBlockDevice,
	DangerGitPushForce, DangerGitResetHard, DangerGitCleanForce, DangerGitBranchDelete,
	DangerPipeToShell, DangerChmod777, DangerKillAll, DangerForkBomb, DangerPackagePublish,
	DangerDockerPruneAll, DangerShutdown, DangerNestedTooDeep,
	DangerRmSystem, DangerFindDeleteSystem, DangerChmodSystem, DangerShellProfile,
	DangerAuthorizedKeys, DangerAgentConfig, DangerTLS, DangerPersistence, DangerPlatformSecurity,
	DangerSystemWrite, DangerRmDynamic, DangerOpaque, DangerUnparsable,
	DangerGitPushDelete, DangerInfraTeardown, DangerDatabaseDrop, DangerPrivilegedContainer, DangerHistoryDestroy,
	DangerPathHijack, DangerMining,
}

// Danger returns the dangerous-list entries the command hits, each id once.
// A command that could not be analysed reports "unparsable" first.
func (a *Analysis) Danger() []DangerMatch {
	out := make([]DangerMatch, 0, len(a.danger)+1)
	if a.Err != nil {
		out = append(out, DangerMatch{ID: DangerUnparsable, Reason: "the command could not be analysed (" + a.Err.Error() + ")"})
	}
	return append(out, a.danger...)
}

func (a *Analysis) addDanger(id, reason string) {
	for _, d := range a.danger {
		if d.ID == id {
			return
		}
	}
	a.danger = append(a.danger, DangerMatch{ID: id, Reason: reason})
}

// findDanger fills a.danger after the walk.
func (a *Analysis) findDanger() {
	if a.TooDeep {
		a.addDanger(DangerNestedTooDeep, "nests more than 3 layers of sh -c, eval, xargs or find -exec")
	}
	if a.forkBomb {
		a.addDanger(DangerForkBomb, "defines a function that starts copies of itself (fork bomb)")
	}
	for i := range a.Segments {
		a.segmentDanger(i)
		a.hardDenySegment(i)
		a.destructiveDanger(i)
		a.interpreterDanger(i)
	}
	a.pipeToShell()
	a.targetDanger()
}

// rootLikeOperands are the operands that make `rm -rf` wipe a whole tree.
var rootLikeOperands = map[string]bool{
	"/": true, "/*": true, "~": true, "~/": true, "~/*": true, "$HOME": true, "$HOME/": true,
	"$HOME/*": true, ".": true, "./": true, "./*": true, "*": true, "..": true, "../": true, "/.*": true,
}

func (a *Analysis) segmentDanger(i int) {
	s := &a.Segments[i]
	if s.opaque != "" {
		a.addDanger(DangerOpaque, s.opaque)
	}
	args := s.Args
	for _, wr := range s.Wrappers {
		if isPrivilegeWrapper(wr) {
			a.addDanger(DangerSudo, "runs a command with elevated privileges ("+wr+")")
		}
	}
	switch name := s.Name; {
	case isPrivilegeWrapper(name):
		a.addDanger(DangerSudo, "runs commands with elevated privileges ("+name+")")
	case name == "su":
		a.addDanger(DangerSu, "switches to another user (su)")
	case name == "dd":
		a.addDanger(DangerDd, "dd copies raw data and can overwrite disks")
	case name == "mkfs" || strings.HasPrefix(name, "mkfs.") || name == "mke2fs" || name == "mkswap":
		a.addDanger(DangerMkfs, "creates a file system, erasing the device ("+name+")")
	case name == "rm":
		a.rmDanger(i)
	case name == "git":
		a.gitDanger(s)
	case name == "chmod":
		recursive := shortCluster(args, "R") || longOpt(args, "--recursive", 5)
		if op, _ := firstOperand(args, "--reference"); recursive && (op == "777" || op == "0777" || op == "a+rwx" || op == "ugo+rwx") {
			a.addDanger(DangerChmod777, "makes a whole tree writable by everyone (chmod -R "+op+")")
		}
	case name == "kill":
		if killsAll(args) {
			a.addDanger(DangerKillAll, "sends a signal to every process (kill -1)")
		}
	case name == "npm" || name == "pnpm" || name == "yarn" || name == "bun":
		op, at := firstOperand(args, npmValued...)
		if op == "publish" || (name == "yarn" && op == "npm" && at+1 < len(args) && args[at+1] == "publish") {
			a.addDanger(DangerPackagePublish, "publishes a package to a registry ("+name+" publish)")
		}
	case name == "docker" || name == "podman":
		if op, at := firstOperand(args); op == "system" && at+1 < len(args) && args[at+1] == "prune" &&
			(shortCluster(args[at+2:], "a") || hasWord(args[at+2:], "--all")) {
			a.addDanger(DangerDockerPruneAll, "deletes all unused images, containers and volumes ("+name+" system prune -a)")
		}
	case name == "shutdown" || name == "reboot" || name == "halt" || name == "poweroff":
		a.addDanger(DangerShutdown, "shuts down or restarts the machine ("+name+")")
	case name == "systemctl":
		if hasWord(args, "poweroff", "reboot", "halt", "kexec") {
			a.addDanger(DangerShutdown, "shuts down or restarts the machine (systemctl)")
		}
	case name == "init" || name == "telinit":
		if hasWord(args, "0", "6") {
			a.addDanger(DangerShutdown, "shuts down or restarts the machine ("+name+")")
		}
	}
}

// killsAll reports kill with -1 as a process id (every process the user
// may signal).
func killsAll(args []string) bool {
	i := 0
	if len(args) > 1 {
		switch a := args[0]; {
		case a == "-l" || a == "-L" || a == "--list" || a == "--table":
			return false
		case a == "-s" || a == "-n" || a == "--signal":
			i = 2
		case strings.HasPrefix(a, "-") && a != "--":
			i = 1 // the signal: -9, -KILL, or -1 (SIGHUP) in front of process ids
		}
	}
	for ; i < len(args); i++ {
		if args[i] == "-1" {
			return true
		}
	}
	return false
}

// npmValued are npm/pnpm/yarn global options that take a separate value.
var npmValued = []string{"-w", "--workspace", "--filter", "-F", "-C", "--dir", "--prefix", "--cwd", "--registry", "--userconfig"}

func (a *Analysis) rmDanger(i int) {
	s := &a.Segments[i]
	p := rmTable.parse(s.args)
	recursive, force := p.has("--recursive"), p.has("--force")
	if !recursive {
		return
	}
	if s.runtimeArgs {
		a.addDanger(DangerRmDynamic, "deletes recursively paths that are only known at run time (xargs rm)")
	}
	ops := p.operands
	for _, op := range ops {
		if force && a.rootLike(op, s.dir) {
			a.addDanger(DangerRmRfRoot, "recursively force-deletes a whole tree (rm -rf "+op.raw+")")
		}
		switch {
		case strings.Contains(op.val, "{}"):
			// find's {} (written as START/{}) or xargs' replace string: a path
			// chosen at run time below the static part in front of it.
			pre := op.val[:strings.Index(op.val, "{}")]
			r := "a path that is only known at run time"
			if pre != "" {
				r = dynamicDeleteReason(op.val[:len(pre)+2], s.dir, a.Cwd, a.Home)
			}
			if r != "" {
				a.addDanger(DangerRmDynamic, "recursively deletes "+r+" ("+op.raw+")")
			}
		case op.dyn && strings.HasPrefix(op.val, "~") && op.prefix == "":
			a.addDanger(DangerRmSystem, "recursively deletes another user's home directory ("+op.raw+")")
		case op.dyn:
			if r := dynamicDeleteReason(op.prefix, s.dir, a.Cwd, a.Home); r != "" {
				a.addDanger(DangerRmDynamic, "recursively deletes "+r+" ("+op.raw+")")
			}
		default:
			p, ok := joinPath(s.dir, globBase(op.val))
			if !ok {
				a.addDanger(DangerRmDynamic, "recursively deletes a path relative to an unknown directory ("+op.raw+")")
				continue
			}
			if r := systemDeleteReason(p, a.Cwd, a.Home); r != "" {
				a.addDanger(DangerRmSystem, "recursively deletes "+r)
			}
		}
	}
}

// rootLike reports rm operands that name /, HOME, the current directory or
// one of its ancestors (also through globs such as ./* or /.*).
func (a *Analysis) rootLike(op arg, dir string) bool {
	if rootLikeOperands[op.val] || rootLikeOperands[op.raw] {
		return true
	}
	if op.dyn {
		return false
	}
	p, ok := joinPath(dir, globBase(op.val))
	if !ok {
		return false
	}
	return p == "/" || (a.Home != "" && within(a.Home, p)) || (dir != "" && within(dir, p)) ||
		(a.Cwd != "" && within(a.Cwd, p))
}

// globBase strips a trailing glob component ("x/*" → "x", "*" → ".").
func globBase(v string) string {
	if !strings.ContainsAny(v, "*?[") {
		return v
	}
	d := path.Dir(v)
	for strings.ContainsAny(d, "*?[") && d != "." && d != "/" {
		d = path.Dir(d)
	}
	return d
}

// dynamicDeleteReason judges a recursive delete whose operand is only
// partly known: prefix is its static beginning. The delete is harmless only
// when everything it can name lies in a HOME, temporary or project subtree
// below the current directory's ancestors. Values are assumed not to climb
// with "..".
func dynamicDeleteReason(prefix, dir, cwd, home string) string {
	if prefix == "" {
		return "a path that is only known at run time"
	}
	cut := strings.LastIndexByte(prefix, '/')
	dirPart, namePart := prefix[:cut+1], prefix[cut+1:]
	parent, ok := joinPath(dir, dirPart)
	if !ok {
		return "a path relative to an unknown directory"
	}
	childDanger := parent == "/" || (home != "" && strictlyWithin(home, parent)) ||
		(cwd != "" && strictlyWithin(cwd, parent)) || systemDeleteReason(path.Join(parent, "x"), cwd, home) != ""
	if childDanger {
		return "a path below " + parent + " chosen at run time"
	}
	if namePart == "" && (systemDeleteReason(parent, cwd, home) != "" || (cwd != "" && within(cwd, parent)) ||
		(dir != "" && within(dir, parent))) {
		return "a path that may be " + parent + " itself"
	}
	return ""
}

func (a *Analysis) gitDanger(s *Segment) {
	g := parseGit(s.args)
	globals, _, rest := gitSplit(s.Args)
	if gitTLSOff(globals) {
		a.addDanger(DangerTLS, "turns off TLS certificate checks (git -c http.sslVerify=false)")
	}
	p := gitSubTable(g.sub).parse(g.rest)
	switch g.sub {
	case "push":
		force := p.has("--force", "--force-with-lease", "--force-if-includes")
		for _, r := range p.operands {
			if strings.HasPrefix(r.val, "+") && len(r.val) > 1 || r.dyn && strings.HasPrefix(r.raw, "+") {
				force = true
			}
		}
		if force {
			a.addDanger(DangerGitPushForce, "force-pushes, which can overwrite remote history (git push --force)")
		}
	case "reset":
		if p.has("--hard") {
			a.addDanger(DangerGitResetHard, "discards uncommitted changes (git reset --hard)")
		}
	case "clean":
		if p.has("--force") {
			a.addDanger(DangerGitCleanForce, "deletes untracked files (git clean -f)")
		}
	case "branch":
		if p.has("-D") || (p.has("--delete") && p.has("--force")) {
			a.addDanger(DangerGitBranchDelete, "force-deletes a branch, possibly losing unmerged commits (git branch -D)")
		}
	case "config":
		for k, r := range rest {
			if isSSLVerifyKey(strings.SplitN(r, "=", 2)[0]) {
				if v := strings.SplitN(r, "=", 2); len(v) == 2 && isFalseWord(v[1]) ||
					k+1 < len(rest) && isFalseWord(rest[k+1]) {
					a.addDanger(DangerTLS, "turns off TLS certificate checks (git config http.sslVerify false)")
				}
			}
		}
	}
}

// pipeToShell finds downloads piped into a shell or interpreter, and
// shells whose script is a substitution that downloads.
func (a *Analysis) pipeToShell() {
	for _, pl := range a.pipelines {
		fetchAt := -1
		for si, stage := range pl.stages {
			for _, i := range stage {
				s := &a.Segments[i]
				if fetchAt >= 0 && si > fetchAt && s.Depth == pl.depth && runsStdinCode(s.Name) {
					a.addDanger(DangerPipeToShell, "pipes a download into "+s.Name)
				}
			}
			for _, i := range stage {
				if n := a.Segments[i].Name; (n == "curl" || n == "wget") && fetchAt < 0 {
					fetchAt = si
				}
			}
		}
	}
	for i := range a.Segments {
		s := &a.Segments[i]
		if !runsStdinCode(s.Name) && s.Name != "eval" && s.Name != "source" && s.Name != "." {
			continue
		}
		if s.netIn || (s.stdin != nil && s.stdin.net) {
			a.addDanger(DangerPipeToShell, s.Name+" runs code read from a network connection (/dev/tcp)")
		}
		for _, j := range s.substSegs {
			if n := a.Segments[j].Name; n == "curl" || n == "wget" {
				a.addDanger(DangerPipeToShell, s.Name+" runs a script downloaded by "+n)
			}
		}
	}
}

// runsStdinCode reports shells and interpreters that execute code read
// from standard input.
func runsStdinCode(name string) bool {
	if shellNames[name] {
		return true
	}
	switch name {
	case "python", "python3", "python2", "perl", "ruby", "node", "nodejs", "php":
		return true
	}
	return false
}

var blockDevice = regexp.MustCompile(`^/dev/(sd[a-z]|hd[a-z]|nvme[0-9]|disk[0-9]|rdisk[0-9]|mmcblk[0-9]|xvd[a-z]|vd[a-z])`)

// targetDanger judges the files the command writes and deletes.
func (a *Analysis) targetDanger() {
	for _, list := range [][]Target{a.Writes, a.Deletes} {
		for _, t := range list {
			if t.Dynamic {
				if mentionsAgentConfig(t.Raw) {
					a.addDanger(DangerAgentConfig, "changes the agent's own configuration ("+t.Raw+")")
				}
				continue
			}
			switch {
			case strings.HasPrefix(t.Path, "/dev/") && blockDevice.MatchString(t.Path):
				a.addDanger(DangerWriteBlockDevice, "writes directly to the block device "+t.Path)
			case agentConfigPath(t.Path, a.Cwd, a.Home):
				a.addDanger(DangerAgentConfig, "changes the agent's own configuration or safety files ("+t.Path+")")
			case path.Base(t.Path) == "authorized_keys" || path.Base(t.Path) == "authorized_keys2":
				a.addDanger(DangerAuthorizedKeys, "changes the SSH authorized keys ("+t.Path+")")
			}
			if r := shellProfileReason(t.Path, a.Home); r != "" {
				a.addDanger(DangerShellProfile, r)
			}
			if r := persistenceTargetReason(t.Path, a.Home); r != "" {
				a.addDanger(DangerPersistence, r)
			} else if r := systemWriteReason(t.Path); r != "" {
				a.addDanger(DangerSystemWrite, r)
			}
		}
	}
}

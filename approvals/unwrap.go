package approvals

import (
	"path"
	"strings"
)

// nestedReq is a nested layer a wrapper starts: a script, or an argv.
type nestedReq struct {
	script string
	argv   []arg
	dir    string
}

// unwrapResult describes the wrappers in front of a command.
type unwrapResult struct {
	idx      int // index of the command word in argv (len(argv) if none)
	wrappers []string
	assigns  []string
	nested   []nestedReq
	writes   []arg  // files a wrapper writes itself (time -o, flock's lock file)
	opaque   string // a wrapper runs code only known at run time
	rest     []arg  // arguments after the last wrapper when no command follows
}

// wrapperSpecs lists transparent wrappers: they run their operand as a
// command after their own options (lesson 5).
var wrapperSpecs = map[string]optSpec{
	"builtin":    {stopFirst: true},
	"nohup":      {stopFirst: true},
	"exec":       {short: "a", stopFirst: true},
	"nice":       {short: "n", long: []string{"--adjustment"}, stopFirst: true},
	"timeout":    {short: "sk", long: []string{"--signal", "--kill-after"}, stopFirst: true},
	"stdbuf":     {short: "ioe", long: []string{"--input", "--output", "--error"}, stopFirst: true},
	"ionice":     {short: "cnpPu", long: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}, stopFirst: true},
	"setsid":     {stopFirst: true},
	"time":       {short: "fo", long: []string{"--format", "--output"}, stopFirst: true},
	"unbuffer":   {stopFirst: true},
	"caffeinate": {short: "tw", stopFirst: true},
	"taskset":    {stopFirst: true},
	"chrt":       {short: "TPD", stopFirst: true},
	"flock":      {short: "wE", long: []string{"--timeout", "--conflict-exit-code"}, stopFirst: true},
	"watch":      {short: "nq", long: []string{"--interval", "--equexit"}, stopFirst: true},
	"sudo": {short: "ugpChrtTDRU", long: []string{"--user", "--group", "--prompt", "--close-from", "--host",
		"--role", "--type", "--command-timeout", "--chdir", "--chroot", "--other-user"}, stopFirst: true},
	"doas": {short: "uC", stopFirst: true},
	// Multi-call binaries: busybox sh, toybox rm.
	"busybox": {stopFirst: true},
	"toybox":  {stopFirst: true},
	"pkexec":  {long: []string{"--user"}, stopFirst: true},
	"run0": {short: "uDg", long: []string{"--user", "--group", "--chdir", "--setenv", "--unit", "--property",
		"--description", "--slice", "--nice", "--machine"}, stopFirst: true},
	// Tracers, namespaces, resource limits and session helpers that run
	// their operand as a command.
	"strace": {short: "aeoOpPsSuEXIb", long: []string{"--output", "--attach", "--user", "--env", "--string-limit",
		"--trace", "--signal", "--status", "--trace-path", "--detach-on", "--columns"}, stopFirst: true},
	"ltrace": {short: "aAeDFlnopsuwx", long: []string{"--output", "--library", "--indent", "--align"}, stopFirst: true},
	"unshare": {short: "RwSGl", long: []string{"--root", "--wd", "--setuid", "--setgid", "--propagation", "--setgroups",
		"--map-user", "--map-group", "--map-users", "--map-groups", "--monotonic", "--boottime", "--load-interp"}, stopFirst: true},
	"chroot":  {long: []string{"--userspec", "--groups"}, stopFirst: true},
	"nsenter": {short: "tSGL", shortOpt: "muinpUCTrw", long: []string{"--target", "--setuid", "--setgid", "--env"}, stopFirst: true},
	"systemd-run": {short: "upEMHsd", long: []string{"--unit", "--property", "--setenv", "--machine", "--host",
		"--description", "--slice", "--uid", "--gid", "--nice", "--working-directory", "--service-type",
		"--on-active", "--on-boot", "--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar",
		"--path-property", "--socket-property", "--timer-property", "--background", "--json"}, stopFirst: true},
	"fakeroot":         {short: "lsib", long: []string{"--lib", "--faked"}, stopFirst: true},
	"valgrind":         {stopFirst: true},
	"numactl":          {short: "ipmCNP", long: []string{"--interleave", "--preferred", "--membind", "--physcpubind", "--cpunodebind", "--preferred-many", "--weighted-interleave"}, stopFirst: true},
	"prlimit":          {short: "p", shortOpt: "cdefilmnqrstuvxy", long: []string{"--pid", "--output"}, stopFirst: true},
	"eatmydata":        {stopFirst: true},
	"xvfb-run":         {short: "nsfepw", long: []string{"--server-num", "--server-args", "--auth-file", "--error-file", "--xauth-protocol", "--wait"}, stopFirst: true},
	"dbus-run-session": {long: []string{"--config-file", "--dbus-daemon"}, stopFirst: true},
	"ssh-agent":        {short: "aEPtO", stopFirst: true},
	"screen":           {short: "SpheTstcX", long: []string{"-Logfile"}, stopFirst: true},
	"runuser":          {short: "ugGsw", long: []string{"--user", "--group", "--supp-group", "--shell", "--whitelist-environment"}, stopFirst: true},
}

// isPrivilegeWrapper reports sudo-like wrappers.
func isPrivilegeWrapper(name string) bool {
	switch name {
	case "sudo", "doas", "pkexec", "run0":
		return true
	}
	return false
}

// unwrap strips assignments-carrying and option-taking wrappers in front of
// the command word. It may change seg.dir (env -C).
func (w *walker) unwrap(seg *Segment, argv []arg) unwrapResult {
	var u unwrapResult
	i := 0
	for i < len(argv) && !argv[i].dyn {
		name := strings.ToLower(path.Base(argv[i].val))
		args := argv[i+1:]
		next := w.unwrapOne(name, args, seg, &u)
		if next < 0 {
			break
		}
		u.wrappers = append(u.wrappers, name)
		i += 1 + next
		if i >= len(argv) {
			u.rest = args
		}
	}
	u.idx = i
	return u
}

// unwrapOne handles one wrapper. It returns the index in args of the wrapped
// command, len(args) when the wrapper consumed everything, or -1 when name is
// not a wrapper (or is used in a form that runs no command).
func (w *walker) unwrapOne(name string, args []arg, seg *Segment, u *unwrapResult) int {
	switch name {
	case "env":
		return w.unwrapEnv(args, seg, u)
	case "command":
		j := 0
		for ; j < len(args) && !args[j].dyn && len(args[j].val) > 1 && args[j].val[0] == '-'; j++ {
			if args[j].val == "--" {
				return j + 1
			}
			if strings.ContainsAny(args[j].val[1:], "vV") {
				return -1 // command -v: a lookup, nothing runs
			}
		}
		return j
	}
	spec, ok := wrapperSpecs[name]
	if !ok {
		return -1
	}
	opts, _, stop := parseArgs(args, spec)
	switch name {
	case "strace", "ltrace":
		if o, ok := optVal(opts, "-o", "--output"); ok {
			u.writes = append(u.writes, o)
		}
	case "valgrind", "dbus-run-session":
		for _, o := range args[:stop] {
			if v, ok := strings.CutPrefix(o.val, "--log-file="); ok {
				u.writes = append(u.writes, arg{val: v, raw: o.raw, dyn: o.dyn})
			}
		}
	case "xvfb-run":
		if o, ok := optVal(opts, "-e", "--error-file"); ok {
			u.writes = append(u.writes, o)
		}
	case "fakeroot":
		if hasOpt(opts, "-l", "--lib", "--faked") {
			u.opaque = "fakeroot loads a library or daemon named in its options"
		}
	case "screen":
		// -X sends commands to a running session (stuff types into its
		// shell), -c reads a configuration that can run commands.
		if hasOpt(opts, "-X", "-c") {
			u.opaque = "screen -X/-c runs screen commands that can type into a shell"
			return len(args)
		}
	case "runuser":
		// runuser -u USER COMMAND…; the su-like form (runuser USER -c …) is
		// handled with su.
		if !hasOpt(opts, "-u", "--user") {
			return -1
		}
	case "chroot":
		if stop < len(args) {
			stop++ // the new root
		}
	case "ionice":
		if hasOpt(opts, "-p", "-P", "-u", "--pid", "--pgid", "--uid") {
			return -1
		}
	case "time":
		if o, ok := optVal(opts, "-o", "--output"); ok {
			u.writes = append(u.writes, o)
		}
	case "timeout", "taskset", "chrt":
		if name == "taskset" && hasOpt(opts, "-p", "--pid") || name == "chrt" && hasOpt(opts, "-p", "-m", "--pid", "--max") {
			return -1
		}
		if stop < len(args) {
			stop++ // duration, CPU mask or priority
		}
	case "sudo":
		if hasOpt(opts, "-e", "--edit", "-l", "--list", "-v", "--validate", "-k", "-K") && stop >= len(args) {
			return -1
		}
		if hasOpt(opts, "-e", "--edit") {
			return -1
		}
	case "flock":
		return w.unwrapFlock(args, stop, seg, u)
	case "watch":
		if hasOpt(opts, "-x", "--exec") {
			return stop
		}
		rest := args[stop:]
		if len(rest) == 0 {
			return len(args)
		}
		vals := make([]string, len(rest))
		for k, x := range rest {
			vals[k] = x.val
			if x.dyn {
				u.opaque = "watch runs a command only known at run time"
			}
		}
		if u.opaque == "" {
			u.nested = append(u.nested, nestedReq{script: strings.Join(vals, " "), dir: seg.dir})
		}
		return len(args)
	}
	if isPrivilegeWrapper(name) {
		for stop < len(args) && isAssignWord(args[stop]) {
			u.assigns = append(u.assigns, args[stop].val)
			stop++
		}
	}
	return stop
}

// isAssignWord reports NAME=value words (env and sudo treat anything with
// "=" before the command as an assignment, even "1=x").
func isAssignWord(a arg) bool {
	if a.dyn {
		return strings.Contains(a.raw, "=") && !strings.HasPrefix(a.raw, "=")
	}
	i := strings.IndexByte(a.val, '=')
	return i > 0
}

// unwrapEnv handles env: options (-i, -u NAME, -C DIR, -S STRING, ...),
// NAME=value assignments, then the command.
func (w *walker) unwrapEnv(args []arg, seg *Segment, u *unwrapResult) int {
	i := 0
	for i < len(args) {
		a := args[i]
		if a.dyn {
			if isAssignWord(a) {
				u.assigns = append(u.assigns, a.val)
				seg.Dynamic = true
				i++
				continue
			}
			return i
		}
		v := a.val
		switch {
		case v == "--":
			i++
			continue
		case v == "-":
			i++
			continue
		case strings.HasPrefix(v, "--"):
			name, val, has := strings.Cut(v, "=")
			valArg := arg{val: val, raw: a.raw}
			needs := name == "--unset" || name == "--chdir" || name == "--split-string"
			if needs && !has {
				if i+1 >= len(args) {
					return len(args)
				}
				i++
				valArg = args[i]
			}
			switch name {
			case "--ignore-environment", "--unset":
				seg.envCleared = "env " + name
			case "--chdir":
				seg.dir = w.resolveDir(seg.dir, valArg)
			case "--split-string":
				w.envSplit(valArg, args[i+1:], seg, u)
				return len(args)
			}
			i++
			continue
		case len(v) > 1 && v[0] == '-':
			for j := 1; j < len(v); j++ {
				c := v[j]
				if c == 'i' || c == 'u' {
					seg.envCleared = "env -" + string(c)
				}
				if strings.IndexByte("uCSP", c) < 0 {
					continue
				}
				valArg := arg{val: v[j+1:], raw: a.raw}
				if j+1 >= len(v) {
					if i+1 >= len(args) {
						return len(args)
					}
					i++
					valArg = args[i]
				}
				switch c {
				case 'C':
					seg.dir = w.resolveDir(seg.dir, valArg)
				case 'S':
					w.envSplit(valArg, args[i+1:], seg, u)
					return len(args)
				}
				break
			}
			i++
			continue
		case isAssignWord(a):
			u.assigns = append(u.assigns, v)
			i++
			continue
		}
		return i
	}
	return len(args)
}

// envSplit handles env -S: the string is split into words (like a small
// shell script) and followed by the remaining operands; env consumes
// everything.
func (w *walker) envSplit(script arg, rest []arg, seg *Segment, u *unwrapResult) {
	parts := []string{script.val}
	for _, r := range rest {
		parts = append(parts, r.raw)
		if r.dyn {
			u.opaque = "env -S runs a command only known at run time"
		}
	}
	if script.dyn {
		u.opaque = "env -S runs a command only known at run time"
	}
	if u.opaque == "" {
		u.nested = append(u.nested, nestedReq{script: strings.Join(parts, " "), dir: seg.dir})
	}
}

// unwrapFlock handles flock LOCKFILE [-c STRING | COMMAND...].
func (w *walker) unwrapFlock(args []arg, stop int, seg *Segment, u *unwrapResult) int {
	if stop >= len(args) || isFdWord(args[stop].val) {
		return -1
	}
	u.writes = append(u.writes, args[stop])
	rest := args[stop+1:]
	if len(rest) >= 2 && (rest[0].val == "-c" || rest[0].val == "--command") {
		if rest[1].dyn {
			u.opaque = "flock -c runs a command only known at run time"
		} else {
			u.nested = append(u.nested, nestedReq{script: rest[1].val, dir: seg.dir})
		}
		return len(args)
	}
	return stop + 1
}

// resolveDir resolves a directory argument (cd, env -C).
func (w *walker) resolveDir(dir string, a arg) string {
	if a.dyn {
		return ""
	}
	p, ok := joinPath(dir, a.val)
	if !ok {
		return ""
	}
	return p
}

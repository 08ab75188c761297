package approvals

import (
	"strings"
)

// Option specs of commands whose operands are write targets.
var (
	copySpec = optSpec{short: "tS", long: []string{"--target-directory", "--suffix"}}
	instSpec = optSpec{short: "tSmogC", long: []string{"--target-directory", "--suffix", "--mode", "--owner", "--group", "--strip-program"}}
	syncSpec = optSpec{short: "efTBM", long: []string{"--rsh", "--filter", "--exclude", "--include", "--temp-dir",
		"--rsync-path", "--log-file", "--partial-dir", "--backup-dir", "--suffix", "--chmod", "--files-from",
		"--exclude-from", "--include-from", "--compare-dest", "--copy-dest", "--link-dest", "--password-file",
		"--port", "--bwlimit", "--timeout", "--max-size", "--min-size", "--block-size", "--out-format", "--info",
		"--debug", "--remote-option"}}
	treeSpec = optSpec{short: "oLPIHT", long: []string{"--charset", "--filelimit", "--timefmt"}}
	sedSpec  = optSpec{short: "efl", shortOpt: "i", long: []string{"--expression", "--file", "--line-length"}}
	sortSpec = optSpec{short: "oktSTy", long: []string{"--output", "--key", "--field-separator", "--buffer-size",
		"--temporary-directory", "--compress-program", "--parallel", "--files0-from", "--random-source", "--batch-size"}}
)

// fileTargets records the files a command writes or deletes through its
// operands and options.
func (w *walker) fileTargets(idx int) {
	s := &w.a.Segments[idx]
	name, args, dir := s.Name, s.args, s.dir
	write := func(a arg) {
		if a.val != "-" || a.dyn {
			w.addWrite(a, name, idx, dir)
		}
	}
	del := func(a arg) { w.addDelete(a, name, idx, dir) }
	switch name {
	case "rm", "rmdir", "unlink", "srm":
		_, ops, _ := parseArgs(args, optSpec{})
		for _, o := range ops {
			write(o)
			del(o)
		}
	case "shred":
		_, ops, _ := parseArgs(args, optSpec{short: "ns", long: []string{"--iterations", "--size", "--random-source"}})
		for _, o := range ops {
			write(o)
			del(o)
		}
	case "truncate":
		_, ops, _ := parseArgs(args, optSpec{short: "sr", long: []string{"--size", "--reference"}})
		for _, o := range ops {
			write(o)
		}
	case "mv", "tee", "mkdir", "touch":
		spec := optSpec{}
		switch name {
		case "mv":
			spec = copySpec
		case "mkdir":
			spec = optSpec{short: "mZ", long: []string{"--mode", "--context"}}
		case "touch":
			spec = optSpec{short: "drt", long: []string{"--date", "--reference", "--time"}}
		}
		opts, ops, _ := parseArgs(args, spec)
		if t, ok := optVal(opts, "-t", "--target-directory"); ok {
			write(t)
		}
		for _, o := range ops {
			write(o)
		}
	case "cp", "ln", "install", "rsync":
		spec := copySpec
		switch name {
		case "install":
			spec = instSpec
		case "rsync":
			spec = syncSpec
		}
		opts, ops, _ := parseArgs(args, spec)
		switch t, ok := optVal(opts, "-t", "--target-directory"); {
		case ok:
			write(t)
		case name == "install" && hasOpt(opts, "-d", "--directory"):
			for _, o := range ops {
				write(o)
			}
		case len(ops) >= 2:
			last := ops[len(ops)-1]
			if name != "rsync" || !isRemoteSpec(last.val) {
				write(last)
			}
		}
	case "chmod", "chown", "chgrp":
		w.modeTargets(idx, write)
	case "dd":
		for _, a := range args {
			if v, ok := strings.CutPrefix(a.val, "of="); ok {
				write(arg{val: v, raw: a.raw, dyn: a.dyn})
			}
		}
	case "sed":
		opts, ops, _ := parseArgs(args, sedSpec)
		if !hasOpt(opts, "-i", "--in-place") {
			return
		}
		if !hasOpt(opts, "-e", "--expression", "-f", "--file") && len(ops) > 0 {
			ops = ops[1:]
		}
		for _, o := range ops {
			write(o)
		}
	case "sort":
		p := sortTable.parse(args)
		if o, ok := p.value("--output"); ok {
			write(o)
		}
	case "tree":
		p := treeTable.parse(args)
		if o, ok := p.value("-o"); ok {
			write(o)
		}
	case "go":
		if len(args) == 0 {
			return
		}
		p := goFlags.parse(args[1:])
		for _, f := range []string{"-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile",
			"-mutexprofile", "-trace", "-outputdir"} {
			for _, o := range p.values(f) {
				write(o)
			}
		}
	case "curl":
		if o, ok := optVal(mustOpts(args, optSpec{short: "oHdXuAeEKrwxTbcFmy", long: []string{"--output", "--output-dir"}}), "-o", "--output"); ok {
			write(o)
		}
	case "wget":
		opts := mustOpts(args, optSpec{short: "OPoaeiUtTwQ", long: []string{"--output-document", "--directory-prefix"}})
		if o, ok := optVal(opts, "-O", "--output-document"); ok {
			write(o)
		}
		if o, ok := optVal(opts, "-P", "--directory-prefix"); ok {
			write(o)
		}
	case "git":
		for _, a := range args {
			if v, ok := strings.CutPrefix(a.val, "--output="); ok {
				write(arg{val: v, raw: a.raw, dyn: a.dyn})
			}
		}
	}
}

func mustOpts(args []arg, spec optSpec) []option {
	opts, _, _ := parseArgs(args, spec)
	return opts
}

// modeTargets handles chmod/chown/chgrp: the first operand is the mode or
// owner (unless --reference gives it), the rest are targets. chmod accepts
// modes that look like options (-w, +x).
func (w *walker) modeTargets(idx int, write func(arg)) {
	s := &w.a.Segments[idx]
	var ops []arg
	ref := false
	for i := 0; i < len(s.args); i++ {
		a := s.args[i]
		v := a.val
		switch {
		case v == "--":
			ops = append(ops, s.args[i+1:]...)
			i = len(s.args)
		case strings.HasPrefix(v, "--reference"):
			ref = true
		case strings.HasPrefix(v, "--from") && !strings.Contains(v, "=") && s.Name != "chmod":
			i++
		case strings.HasPrefix(v, "--"):
		case len(v) > 1 && v[0] == '-' && !a.dyn && (s.Name != "chmod" || strings.Trim(v[1:], "cfvRHLP") == ""):
		default:
			ops = append(ops, a)
		}
	}
	if !ref && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, o := range ops {
		write(o)
	}
}

// isRemoteSpec reports rsync/scp remote paths (host:path, rsync://).
func isRemoteSpec(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	colon := strings.IndexByte(s, ':')
	slash := strings.IndexByte(s, '/')
	return colon > 0 && (slash < 0 || colon < slash)
}

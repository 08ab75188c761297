package approvals

import (
	"maps"
	"slices"
	"strings"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// A read is judged by everything it can reach: a command that walks a tree
// (grep -r, rg, find, tar c, du, cp -r, rsync, zip -r, ls -R, ...) reads
// every file below its roots, so a root that is an ancestor of a secret
// (HOME, /, /proc/<pid>/) reaches the secret although no argument names
// it. The roots are the program's path operands (with the pattern of a
// search left out when the program's parser takes one), or its starting
// directory when it has none; anything the parse cannot place counts as a
// root too, which only errs on the strict side.

// Option specs of the tree walkers: the options that take a separate value,
// so that the value is not taken for a root.
var (
	agReachSpec = optSpec{short: "ABCGgm", long: []string{"--after", "--before", "--context", "--file-search-regex",
		"--ignore", "--ignore-dir", "--max-count", "--depth", "--pager", "--path-to-ignore", "--workers",
		"--ignore-file", "--type", "--type-set", "--type-add", "--match", "--output"}}
	duReachSpec = optSpec{short: "dBtX", long: []string{"--max-depth", "--threshold", "--block-size", "--exclude",
		"--exclude-from", "--files0-from", "--time", "--time-style"}}
	zipReachSpec = optSpec{short: "bntZPsO", long: []string{"--temp-path", "--suffixes", "--from-date",
		"--compression-method", "--password", "--split-size", "--output-file"}}
)

// GNU option tables of the walkers whose long options take unique-prefix
// abbreviations (grep --recur, ls --rec, cp --arch, diff --recu): the
// recursion switch is found however it is spelt.
var (
	grepReachTable = newOptTable(styleGNU, "-E|--extended-regexp -F|--fixed-strings -G|--basic-regexp "+
		"-P|--perl-regexp -e|--regexp= -f|--file= -i|--ignore-case --no-ignore-case -w|--word-regexp "+
		"-x|--line-regexp -z|--null-data -s|--no-messages -v|--invert-match -V|--version --help "+
		"-m|--max-count= -b|--byte-offset --line-buffered -n|--line-number -H|--with-filename "+
		"-h|--no-filename --label= -o|--only-matching -q|--quiet|--silent --binary-files= -a|--text -I "+
		"-d|--directories= -D|--devices= -r|--recursive -R|--dereference-recursive --include= --exclude= "+
		"--exclude-from= --exclude-dir= -L|--files-without-match -l|--files-with-matches -c|--count "+
		"-T|--initial-tab -Z|--null -B|--before-context= -A|--after-context= -C|--context= --color? "+
		"--colour? --group-separator= --no-group-separator -U|--binary -u|--unix-byte-offsets -y").other()
	lsReachTable = newOptTable(styleGNU, "-a|--all -A|--almost-all --author -b|--escape --block-size= "+
		"-B|--ignore-backups -c -C --color? -d|--directory -D|--dired -f -F|--classify? --file-type --format= "+
		"--full-time -g --group-directories-first -G|--no-group -h|--human-readable --si "+
		"-H|--dereference-command-line --dereference-command-line-symlink-to-dir --hide= --hyperlink? "+
		"--indicator-style= -i|--inode -I|--ignore= -k|--kibibytes -l -L|--dereference -m -n|--numeric-uid-gid "+
		"-N|--literal -o -p -q|--hide-control-chars --show-control-chars -Q|--quote-name --quoting-style= "+
		"-r|--reverse -R|--recursive -s|--size -S --sort= --time= --time-style= -t -T|--tabsize= -u -U -v "+
		"-w|--width= -x -X -Z|--context --zero -1 --help --version").other()
	cpReachTable = newOptTable(styleGNU, "-a|--archive --attributes-only --backup? -b --copy-contents -d "+
		"-f|--force -i|--interactive -H -l|--link -L|--dereference -n|--no-clobber -P|--no-dereference -p "+
		"--preserve? --no-preserve= --parents -R|-r|--recursive --reflink? --remove-destination --sparse= "+
		"--strip-trailing-slashes -s|--symbolic-link -S|--suffix= -t|--target-directory= "+
		"-T|--no-target-directory -u|--update? -v|--verbose -x|--one-file-system -Z --context? --help --version").other()
	diffReachTable = newOptTable(styleGNU, "--normal -q|--brief -s|--report-identical-files -c -C|--context? "+
		"-u -U|--unified? -e|--ed -n|--rcs -y|--side-by-side -W|--width= --left-column --suppress-common-lines "+
		"-p|--show-c-function -F|--show-function-line= --label= --expand-tabs -t -T|--initial-tab --tabsize= "+
		"--suppress-blank-empty -l|--paginate -r|--recursive --no-dereference -N|--new-file "+
		"--unidirectional-new-file --ignore-file-name-case --no-ignore-file-name-case -x|--exclude= "+
		"-X|--exclude-from= -S|--starting-file= --from-file= --to-file= -i|--ignore-case "+
		"-E|--ignore-tab-expansion -Z|--ignore-trailing-space -b|--ignore-space-change -w|--ignore-all-space "+
		"-B|--ignore-blank-lines -I|--ignore-matching-lines= -a|--text --strip-trailing-cr -D|--ifdef= "+
		"--GTYPE-group-format= --line-format= --LTYPE-line-format= -d|--minimal --horizon-lines= "+
		"--speed-large-files --color? --palette= --help -v|--version").other()
)

// walkRoots returns the roots a command walks recursively and whether it
// walks at all. An empty root list with walks set means its directory.
func walkRoots(s *Segment) (roots []arg, walks bool) {
	args := s.args
	switch s.Name {
	case "grep", "egrep", "fgrep", "zgrep", "ugrep":
		p := grepReachTable.parse(args)
		rec := p.has("--recursive", "--dereference-recursive")
		for _, d := range p.values("--directories") {
			if d.dyn || d.val != "" && strings.HasPrefix("recurse", d.val) {
				rec = true
			}
		}
		if !rec {
			return nil, false
		}
		ops := p.operands
		if !p.has("--regexp", "--file") && len(ops) > 0 {
			ops = ops[1:]
		}
		return ops, true
	case "rg":
		p := rgTable.parse(args)
		ops := p.operands
		if !p.has("--regexp") && !p.has("--file") && !hasWord(s.Args, "--files", "--type-list") && len(ops) > 0 {
			ops = ops[1:]
		}
		return ops, true
	case "ag", "ack", "ack-grep", "pt", "sift":
		_, ops, _ := parseArgs(args, agReachSpec)
		if len(ops) > 0 {
			ops = ops[1:]
		}
		return ops, true
	case "find":
		roots, _ := findRoots(args)
		if hasWord(s.Args, "-files0-from") {
			// The starting points are read from a file at run time.
			roots = append(roots, arg{dyn: true, raw: "-files0-from"})
		}
		return roots, true
	case "fd", "fdfind":
		p := fdTable.parse(args)
		ops := p.operands
		if len(ops) > 0 {
			ops = ops[1:] // the pattern
		}
		ops = append(ops, p.values("--search-path")...)
		ops = append(ops, p.values("--base-directory")...)
		return ops, true
	case "tree":
		return treeTable.parse(args).operands, true
	case "du":
		_, ops, _ := parseArgs(args, duReachSpec)
		if longOpt(s.Args, "--files0-from", 5) {
			ops = append(ops, arg{dyn: true, raw: "--files0-from"})
		}
		return ops, true
	case "ls", "dir", "vdir":
		p := lsReachTable.parse(args)
		if !p.has("--recursive") {
			return nil, false
		}
		return p.operands, true
	case "tar", "bsdtar", "gtar":
		return tarReadRoots(s)
	case "diff", "colordiff":
		// diff -r reads both trees (with -N the whole content of files
		// only one side has).
		p := diffReachTable.parse(args)
		if !p.has("--recursive") {
			return nil, false
		}
		ops := append(p.operands, p.values("--from-file")...)
		return nonEmpty(append(ops, p.values("--to-file")...)), true
	case "git":
		// git diff --no-index and git grep --no-index compare and search
		// directory trees outside any repository.
		g := parseGit(args)
		if g.sub != "diff" && g.sub != "grep" {
			return nil, false
		}
		p := gitSubTable(g.sub).parse(g.rest)
		if !p.has("--no-index") && !hasWord(argVals(g.rest), "--no-index") {
			return nil, false
		}
		return nonEmpty(p.operands), true
	case "7z", "7za", "7zz", "7zr":
		// 7z a/u ARCHIVE FILES...: recursive by default.
		ws := bareWords(s.Args)
		if len(ws) < 2 || ws[0] != "a" && ws[0] != "u" {
			return nil, false
		}
		var ops []arg
		for _, x := range args {
			if !strings.HasPrefix(x.val, "-") || x.dyn {
				ops = append(ops, x)
			}
		}
		if len(ops) > 2 {
			return ops[2:], true
		}
		return nil, true
	case "cp":
		p := cpReachTable.parse(args)
		if !p.has("--recursive", "--archive") {
			return nil, false
		}
		ops := p.operands
		if _, ok := p.value("--target-directory"); !ok && len(ops) > 1 {
			ops = ops[:len(ops)-1]
		}
		return nonEmpty(ops), true
	case "rsync":
		opts, ops, _ := parseArgs(args, syncSpec)
		if !hasOpt(opts, "-r", "-a", "--recursive", "--archive") {
			return nil, false
		}
		if len(ops) > 1 {
			ops = ops[:len(ops)-1]
		}
		var local []arg
		for _, o := range ops {
			if o.dyn || !isRemoteSpec(o.val) {
				local = append(local, o)
			}
		}
		return nonEmpty(local), true
	case "zip":
		opts, ops, _ := parseArgs(args, zipReachSpec)
		if !hasOpt(opts, "-r", "-R", "--recurse-paths", "--recurse-patterns") {
			return nil, false
		}
		if len(ops) > 0 {
			ops = ops[1:] // the archive
		}
		return nonEmpty(ops), true
	}
	return nil, false
}

// nonEmpty keeps a walker whose sources are all missing from falling back
// to its directory: cp -r with one operand copies nothing.
func nonEmpty(ops []arg) []arg {
	if len(ops) == 0 {
		return []arg{{val: "\x00none"}}
	}
	return ops
}

// tarReadRoots: tar c/r/u (create, append, update) reads its file operands
// and the directories of -C; extracting and listing read only the archive.
func tarReadRoots(s *Segment) ([]arg, bool) {
	args := s.args
	if len(args) == 0 {
		return nil, false
	}
	creates := false
	if v := args[0].val; !args[0].dyn && v != "" && v[0] != '-' {
		// Old style: the first word is a cluster of letters (czf).
		creates = strings.ContainsAny(v, "cru")
		if creates {
			return nonEmpty(args[1:]), true // every later word may be a root
		}
	}
	p := tarTable.parse(args)
	for _, o := range p.opts {
		t := o.text
		if t == "-c" || t == "-r" || t == "-u" || t == "-A" {
			creates = true
		}
		for _, long := range [...]string{"--create", "--append", "--update", "--catenate", "--concatenate"} {
			if len(t) >= 4 && strings.HasPrefix(long, t) {
				creates = true // GNU takes any unique prefix
			}
		}
	}
	for _, x := range args {
		if !x.dyn && len(x.val) > 1 && x.val[0] == '-' && x.val[1] != '-' && strings.ContainsAny(x.val[1:], "cru") {
			creates = true // a short cluster such as -czf
		}
	}
	if !creates {
		return nil, false
	}
	roots := append([]arg(nil), p.operands...)
	roots = append(roots, p.values("--directory")...)
	return nonEmpty(roots), true
}

// reachReason says why a segment's recursive read can reach secrets, or
// returns "".
func (a *Analysis) reachReason(s *Segment, private []string) string {
	roots, walks := walkedRoots(s)
	if !walks {
		return ""
	}
	if s.runtimeArgs {
		return "reads recursively below directories only known at run time (xargs " + s.Name + ")"
	}
	follows := followsLinks(s)
	for _, r := range roots {
		if r.val == "\x00none" {
			continue
		}
		if why := a.linkedReachReason(s, r, follows, private); why != "" {
			return why
		}
		var p string
		switch {
		case r.dyn:
			if r.prefix == "" || !strings.Contains(r.prefix, "/") {
				return "reads recursively below a directory only known at run time (" + s.Name + " " + r.raw + ")"
			}
			var ok bool
			if p, ok = joinPath(s.dir, r.prefix[:strings.LastIndexByte(r.prefix, '/')+1]); !ok {
				return "reads recursively below a directory only known at run time (" + s.Name + " " + r.raw + ")"
			}
		default:
			var ok bool
			if p, ok = joinPath(s.dir, globBase(r.val)); !ok {
				return "reads recursively below a directory only known at run time (" + s.Name + " " + r.raw + ")"
			}
		}
		if why := secrets.ReachesSecret(p, a.Home, private...); why != "" {
			return "reads recursively everything below " + why + " (" + s.Name + ")"
		}
		if !r.dyn {
			if rp := a.realArg(s, globBase(r.val)); rp != "" && rp != p {
				if why := secrets.ReachesSecret(rp, a.Home, private...); why != "" {
					return "reads recursively everything below " + why + " (" + r.raw + " resolves to " + rp + ")"
				}
			}
		}
	}
	return ""
}

// followsLinks reports walkers that follow the symlinks they meet below
// their roots (grep -R, rg -L, find -L, fd -L, tree -l, du/ls -L, tar -h,
// cp -L, rsync -L/-k, and by default zip -r, diff -r, 7z a, ack): they
// also read everything those links lead to. It errs on the following
// side, which only costs a look at the tree (LinkScans).
func followsLinks(s *Segment) bool {
	a := s.Args
	switch s.Name {
	case "grep", "egrep", "fgrep", "zgrep", "ugrep":
		p := grepReachTable.parse(s.args)
		return p.has("--dereference-recursive")
	case "rg", "fd", "fdfind":
		return shortCluster(a, "L") || hasWord(a, "--follow")
	case "ag", "pt", "sift":
		return shortCluster(a, "f") || hasWord(a, "--follow")
	case "ack", "ack-grep":
		return !hasWord(a, "--nofollow", "--no-follow")
	case "find":
		_, expr := findRoots(s.args)
		return hasWord(a[:min(expr, len(a))], "-L") || hasWord(a, "-follow")
	case "tree":
		return shortCluster(a, "l")
	case "du", "ls", "dir", "vdir", "cp":
		return shortCluster(a, "L") || longOpt(a, "--dereference", 5)
	case "tar", "bsdtar", "gtar":
		return len(a) > 0 && a[0] != "" && a[0][0] != '-' && strings.Contains(a[0], "h") ||
			shortCluster(a, "h") || longOpt(a, "--dereference", 5)
	case "rsync":
		return shortCluster(a, "Lk") || longOpt(a, "--copy-links", 8) || longOpt(a, "--copy-unsafe-links", 8) ||
			longOpt(a, "--copy-dirlinks", 8)
	case "zip":
		return !shortCluster(a, "y") && !longOpt(a, "--symlinks", 4)
	case "diff", "colordiff":
		return !longOpt(a, "--no-dereference", 6)
	case "7z", "7za", "7zz", "7zr":
		return !hasWord(a, "-snl")
	}
	return false
}

// LinkScan is a look at the file system the verdict needs beyond
// PathsToResolve, because the command reaches what links lead to although
// no argument names it: a glob argument (cat src/*) expands to names that
// may be links to a key or to HOME, and a walker that follows links
// (followsLinks) reads every tree a link below its root leads to. The
// caller (tools.Resolve) does the I/O and hands the findings back through
// WithLinks.
type LinkScan struct {
	// Path is absolute, joined to the command's directory, not cleaned;
	// it may hold bash glob characters (* ? [...]).
	Path string
	// Tree asks for every link below each match too.
	Tree bool
}

// LinkReach is what a LinkScan found.
type LinkReach struct {
	// Targets are absolute, clean, link-free paths: where a match that is
	// (or passes through) a link leads, and with Tree where each link
	// below a match leads when that is outside the match's tree (and,
	// recursively, the links found there).
	Targets []string
	// Incomplete: the scan stopped (too many entries or matches, a link
	// loop); what the command reaches is not all known.
	Incomplete bool
}

// maxLinkScans bounds the scans one command asks for; a command that
// would need more is judged as reaching what it cannot be shown not to.
const maxLinkScans = 64

// walkedRoots are walkRoots with "." for a walk that names no root (grep
// -r x walks the directory it runs in): the spelling reachReason judges
// and LinkScans asks about, so that a scan's findings are found again.
func walkedRoots(s *Segment) ([]arg, bool) {
	roots, walks := walkRoots(s)
	if walks && len(roots) == 0 {
		roots = []arg{{val: ".", raw: "."}}
	}
	return roots, walks
}

// LinkScans lists the scans the verdict needs: every static glob argument,
// and the static roots of each walker that follows links. At most
// maxLinkScans; relative paths in an unknown directory are left out (they
// stay judged by their text).
func (a *Analysis) LinkScans() []LinkScan {
	if a == nil || a.Err != nil {
		return nil
	}
	var out []LinkScan
	seen := map[LinkScan]bool{}
	add := func(sc LinkScan) {
		if sc.Path != "" && sc.Path[0] == '/' && !seen[sc] && len(out) < maxLinkScans {
			seen[sc] = true
			out = append(out, sc)
		}
	}
	for _, b := range a.bound {
		if v, ok := argWord(b.x); ok && strings.ContainsAny(v, "*?[") && !strings.Contains(v, "://") {
			add(LinkScan{Path: joinRaw(b.dir, v)})
		}
	}
	for i := range a.Segments {
		s := &a.Segments[i]
		for _, x := range s.args {
			if v, ok := argWord(x); ok && strings.ContainsAny(v, "*?[") && !strings.Contains(v, "://") {
				add(LinkScan{Path: joinRaw(s.dir, v)})
			}
		}
		roots, walks := walkedRoots(s)
		if !walks || s.runtimeArgs || !followsLinks(s) {
			continue
		}
		for _, r := range roots {
			if !r.dyn && r.val != "\x00none" {
				add(LinkScan{Path: joinRaw(s.dir, r.val), Tree: true})
			}
		}
	}
	return out
}

// WithLinks returns a copy of a that judges what the links LinkScans asked
// about lead to (found holds the caller's findings; a scan missing from it
// counts as incomplete). a is not changed; it does no I/O.
func (a *Analysis) WithLinks(found map[LinkScan]LinkReach) *Analysis {
	if a == nil || a.Err != nil {
		return a
	}
	b := *a
	b.links = found
	if b.links == nil {
		b.links = map[LinkScan]LinkReach{}
	}
	return &b
}

// linkReach returns what the scan of path found; ok is false when no scans
// were made (an analysis of the text alone) or path is unknown.
func (a *Analysis) linkReach(path string, tree bool) (LinkReach, bool) {
	if a.links == nil || path == "" || path[0] != '/' {
		return LinkReach{}, false
	}
	lr, ok := a.links[LinkScan{Path: path, Tree: tree}]
	if !ok {
		lr.Incomplete = true
	}
	return lr, true
}

// linkedSecretReason says why a glob argument reads a secret through a
// link it matches, or returns "".
func (a *Analysis) linkedSecretReason(s *Segment, v string, private []string) string {
	lr, ok := a.linkReach(joinRaw(s.dir, v), false)
	if !ok {
		return ""
	}
	for _, t := range lr.Targets {
		if r := privateSecretReason(t, private); r != "" {
			return "touches " + r + " (" + v + " matches a link to " + t + ")"
		}
	}
	if lr.Incomplete {
		return "matches more names than can be checked for links to secrets (" + v + ")"
	}
	return ""
}

// linkedReachReason says why a walk from root reaches a secret through
// the links it meets (or a glob root matches), or returns "".
func (a *Analysis) linkedReachReason(s *Segment, r arg, follows bool, private []string) string {
	if r.dyn || r.val == "\x00none" || (!follows && !strings.ContainsAny(r.val, "*?[")) {
		return ""
	}
	lr, ok := a.linkReach(joinRaw(s.dir, r.val), follows)
	if !ok {
		return ""
	}
	for _, t := range lr.Targets {
		if why := secrets.ReachesSecret(t, a.Home, private...); why != "" {
			return "reads recursively everything below " + why + " (" + s.Name + " " + r.raw + " follows a link to " + t + ")"
		}
		if why := privateSecretReason(t, private); why != "" {
			return "reads " + why + " (" + s.Name + " " + r.raw + " follows a link to " + t + ")"
		}
	}
	if lr.Incomplete {
		return "follows links in a tree too large to check (" + s.Name + " " + r.raw + ")"
	}
	return ""
}

// SameView reports whether b, the same command analysed again, found the
// file system as a did: every path resolved to the same place and every
// link scan found the same, and every repository git runs in has the same
// risky settings and aliases (WithGitRisk). A command is judged before the earlier calls
// of its reply run; one of them may plant a link it then reads through
// (ln -s ~ h, then grep -R), so the caller analyses it again when it
// starts and does not run it when the view changed.
func (a *Analysis) SameView(b *Analysis) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !maps.Equal(a.real, b.real) || len(a.links) != len(b.links) || !maps.Equal(a.gitRisk, b.gitRisk) ||
		!maps.EqualFunc(a.gitAliases, b.gitAliases, slices.Equal[[]string]) {
		return false
	}
	for k, x := range a.links {
		y, ok := b.links[k]
		if !ok || x.Incomplete != y.Incomplete || !slices.Equal(x.Targets, y.Targets) {
			return false
		}
	}
	return true
}

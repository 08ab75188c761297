package approvals

import "strings"

// Inline code of other languages (python3 -c, perl -e, node -e, awk
// programs, python3 - <<EOF, echo … | node) is not analysed as a language:
// running it is treated like running a project script (python3 x.py), so it
// is not opaque (see stdin.go for the reasoning). As a bounded best effort,
// the quoted string literals of such code that contain white space and
// parse as shell commands are checked against the dangerous list, which
// catches the plain evasions os.system('rm -rf /'), system("sudo …"),
// execSync('curl … | sh'). Argument lists (subprocess.run(["rm", "-rf",
// "/"])) and computed strings are not seen.

// codeInterpreters run program text given inline or on standard input.
var codeInterpreters = map[string]bool{
	"python": true, "python2": true, "python3": true, "perl": true, "ruby": true, "node": true, "nodejs": true,
	"deno": true, "bun": true, "php": true, "awk": true, "gawk": true, "mawk": true, "nawk": true,
}

// Limits of the literal check, per analysis.
const (
	maxLiteralChecks = 32
	maxLiteralBytes  = 4096
)

// interpreterDanger checks the inline code of an interpreter segment.
func (a *Analysis) interpreterDanger(i int) {
	s := &a.Segments[i]
	if a.literal || !codeInterpreters[s.Name] || a.literalChecks >= maxLiteralChecks {
		return
	}
	for _, x := range s.args {
		a.literalDanger(s.Name, x.val)
	}
	a.literalDanger(s.Name, s.stdinText)
	if s.stdin != nil && s.stdin.from > 0 {
		a.literalDanger(s.Name, a.resolve(s.stdin).text)
	}
}

// literalDanger checks the string literals of one code text.
func (a *Analysis) literalDanger(name, code string) {
	for _, lit := range quotedLiterals(code) {
		if a.literalChecks >= maxLiteralChecks {
			return
		}
		if len(lit) > maxLiteralBytes || !strings.ContainsAny(lit, " \t") {
			continue
		}
		a.literalChecks++
		sub := &Analysis{Command: lit, Cwd: a.Cwd, Dir: a.Dir, Home: a.Home, literal: true}
		w := &walker{a: sub, src: lit, dir: a.Dir}
		if !utf8Clean(lit) || w.script(lit) != nil {
			continue // not a shell command
		}
		sub.findDanger()
		for _, d := range sub.danger {
			switch d.ID {
			case DangerOpaque, DangerNestedTooDeep, DangerUnparsable:
				continue
			}
			a.addDanger(d.ID, name+" code runs a shell command that "+d.Reason)
		}
	}
}

// utf8Clean reports text the analyser accepts (no NUL bytes; code texts
// come from the analysed command, which is valid UTF-8).
func utf8Clean(s string) bool { return strings.IndexByte(s, 0) < 0 }

// quotedLiterals returns the contents of the '…', "…" and `…` literals of
// a program text (backslash escapes skipped, not decoded), at most
// maxLiteralChecks of them.
func quotedLiterals(code string) []string {
	if !strings.ContainsAny(code, "'\"`") {
		return nil
	}
	var out []string
	for i := 0; i < len(code) && len(out) < maxLiteralChecks; i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		j := i + 1
		for j < len(code) && code[j] != q {
			if code[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(code) {
			break
		}
		if j > i+1 {
			out = append(out, code[i+1:j])
		}
		i = j
	}
	return out
}

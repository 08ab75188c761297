package approvals

import (
	"slices"
	"strings"
)

// option is one parsed command-line option.
type option struct {
	name   string // "-x" or "--long"
	val    arg    // its value, if it takes one
	hasVal bool
}

// optSpec says which options of a command take a value.
type optSpec struct {
	short     string   // short options with a value, glued (-n10) or separate (-n 10)
	shortOpt  string   // short options with an optional value that must be glued (xargs -i, sed -i)
	long      []string // long options with a value, "--x=v" or "--x v"
	stopFirst bool     // options end at the first operand (wrappers, POSIX style)
}

// parseArgs splits arguments into options and operands the way getopt_long
// does: clusters of short flags, short options with glued or separate values,
// long options with "=value" or a separate value, "--" ending the options.
// Without stopFirst, options may follow operands (GNU permutation). It
// returns the options, the operands and the index where parsing stopped
// (the first operand when stopFirst is set). A word only known at run time
// counts as an operand.
func parseArgs(args []arg, spec optSpec) (opts []option, operands []arg, stop int) {
	i := 0
	for i < len(args) {
		a := args[i]
		v := a.val
		if a.dyn || len(v) < 2 || v[0] != '-' {
			if spec.stopFirst {
				return opts, append(operands, args[i:]...), i
			}
			operands = append(operands, a)
			i++
			continue
		}
		if v == "--" {
			i++
			return opts, append(operands, args[i:]...), i
		}
		if strings.HasPrefix(v, "--") {
			name, val, has := strings.Cut(v, "=")
			o := option{name: name, hasVal: has, val: arg{val: val, raw: a.raw}}
			if !has && slices.Contains(spec.long, name) && i+1 < len(args) {
				o.val, o.hasVal = args[i+1], true
				i++
			}
			opts = append(opts, o)
			i++
			continue
		}
		consumedNext := false
		for j := 1; j < len(v); j++ {
			c := v[j]
			name := "-" + string(c)
			if strings.IndexByte(spec.shortOpt, c) >= 0 {
				o := option{name: name}
				if j+1 < len(v) {
					o.val, o.hasVal = arg{val: v[j+1:], raw: a.raw}, true
				}
				opts = append(opts, o)
				break
			}
			if strings.IndexByte(spec.short, c) >= 0 {
				o := option{name: name, hasVal: true}
				switch {
				case j+1 < len(v):
					o.val = arg{val: v[j+1:], raw: a.raw}
				case i+1 < len(args):
					o.val = args[i+1]
					consumedNext = true
				default:
					o.hasVal = false
				}
				opts = append(opts, o)
				break
			}
			opts = append(opts, option{name: name})
		}
		i++
		if consumedNext {
			i++
		}
	}
	return opts, operands, len(args)
}

// hasOpt reports whether an option with one of the names was given.
func hasOpt(opts []option, names ...string) bool {
	for _, o := range opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

// optVal returns the value of the last option with one of the names.
func optVal(opts []option, names ...string) (arg, bool) {
	for i := len(opts) - 1; i >= 0; i-- {
		if slices.Contains(names, opts[i].name) && opts[i].hasVal {
			return opts[i].val, true
		}
	}
	return arg{}, false
}

// shortCluster reports whether any short-option cluster before "--"
// contains one of the letters.
func shortCluster(args []string, letters string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], letters) {
			return true
		}
	}
	return false
}

// longOpt reports whether a long option before "--" is an accepted
// abbreviation of full (GNU accepts unambiguous prefixes; minLen is the
// shortest unambiguous one, including the dashes).
func longOpt(args []string, full string, minLen int) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(a, "=")
		if len(name) >= minLen && strings.HasPrefix(full, name) {
			return true
		}
	}
	return false
}

// hasWord reports whether one of the words occurs among args.
func hasWord(args []string, words ...string) bool {
	for _, a := range args {
		if slices.Contains(words, a) {
			return true
		}
	}
	return false
}

// hasPrefixed reports an argument equal to one of the names or starting with
// one of them followed by "=" (or, for short names, glued to a value).
func hasPrefixed(args []string, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a == n || strings.HasPrefix(a, n+"=") ||
				(len(n) == 2 && n[0] == '-' && n[1] != '-' && strings.HasPrefix(a, n)) {
				return true
			}
		}
	}
	return false
}

// firstOperand returns the first argument that is not an option, skipping
// the values of the listed value-taking options.
func firstOperand(args []string, valued ...string) (string, int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1], i + 1
			}
			return "", -1
		}
		if len(a) > 1 && a[0] == '-' {
			if slices.Contains(valued, a) {
				i++
			}
			continue
		}
		return a, i
	}
	return "", -1
}

package approvals

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Option tables: how a program parses its command line, so that the safe
// lists and the dangerous list judge the options the program will see, not
// the text. GNU getopt_long and git's parse-options accept any unique prefix
// of a long option (`--force-w` is --force-with-lease, `--ha` is --hard),
// "--opt=value" and "--opt value", clusters of short options (-fdx) and "--"
// ending the options; Go's flag package takes -flag and --flag, "=value" or
// a separate value, and neither clusters nor abbreviations. Written here
// rather than taken from a library: the point is to model several foreign
// parsers exactly, including their abbreviation rules, which option
// libraries for Go programs do not offer.

// valKind says whether an option takes a value.
type valKind uint8

const (
	noVal  valKind = iota
	reqVal         // "--x=v", "--x v", "-xv", "-x v"
	valOpt         // only glued: "--x=v", "-xv"
)

// optStyle is the parser a program uses.
type optStyle uint8

const (
	styleGNU   optStyle = iota // getopt_long / git parse-options: clusters, unique-prefix abbreviations
	styleExact                 // clusters, long options only in full (clap, lexopt, tree)
	styleGo                    // Go flag package: -flag or --flag, no clusters, no abbreviations
)

// optDef is one option of a table.
type optDef struct {
	name string // canonical name: the long form when there is one
	val  valKind
	bad  bool // using it is not safe (writes elsewhere, runs code, changes the system)
}

// optTable is the option grammar of one program (or git subcommand). Its
// spellings are parsed from the spec when the table is first used: built
// at package initialisation, the forty tables cost every ama-rpc start
// 0.25 MB in 2,500 allocations, and a session uses a handful of them.
type optTable struct {
	style     optStyle
	anyOther  bool      // options not in the table are accepted (the program has no others that matter)
	stopFirst bool      // options end at the first operand
	base      *optTable // with: the table this one extends
	spec      string
	once      sync.Once
	g         optGrammar // after once
}

// optGrammar is a table's parsed spec.
type optGrammar struct {
	defs  map[string]*optDef // by every spelling: "-o", "--output"
	longs []string           // long spellings, sorted, for prefix lookups
}

// newOptTable makes a table from a spec: space-separated groups of
// spellings joined by '|' ("-o|--output="), the canonical name being the
// last; a trailing '=' marks a required value, '?' an optional glued value,
// a leading '!' an option that is not safe.
func newOptTable(style optStyle, spec string) *optTable {
	return &optTable{style: style, spec: spec}
}

// grammar parses the spec once (safe for concurrent use).
func (t *optTable) grammar() *optGrammar {
	t.once.Do(func() {
		t.g.defs = map[string]*optDef{}
		if t.base != nil {
			b := t.base.grammar()
			maps.Copy(t.g.defs, b.defs)
			t.g.longs = slices.Clone(b.longs)
		}
		t.g.add(t.style, t.spec)
	})
	return &t.g
}

func (g *optGrammar) add(style optStyle, spec string) {
	for _, s := range strings.Fields(spec) {
		d := &optDef{}
		if strings.HasPrefix(s, "!") {
			d.bad, s = true, s[1:]
		}
		switch {
		case strings.HasSuffix(s, "="):
			d.val, s = reqVal, s[:len(s)-1]
		case strings.HasSuffix(s, "?"):
			d.val, s = valOpt, s[:len(s)-1]
		}
		names := strings.Split(s, "|")
		d.name = names[len(names)-1]
		for _, n := range names {
			g.defs[n] = d
			if strings.HasPrefix(n, "--") || (style == styleGo && strings.HasPrefix(n, "-")) {
				g.longs = append(g.longs, n)
			}
		}
	}
	sort.Strings(g.longs)
}

// with returns a table with t's options and more.
func (t *optTable) with(spec string) *optTable {
	return &optTable{style: t.style, anyOther: t.anyOther, stopFirst: t.stopFirst, base: t, spec: spec}
}

func (t *optTable) other() *optTable { t.anyOther = true; return t }
func (t *optTable) posix() *optTable { t.stopFirst = true; return t }

// pOpt is one option as the program parses it.
type pOpt struct {
	text   string    // as written, without a value
	def    *optDef   // nil when unknown or ambiguous
	cands  []*optDef // for an abbreviation: every option it may stand for
	neg    bool      // git's --no-X form of X
	val    arg
	hasVal bool
}

// is reports whether the option is, or may be (an ambiguous abbreviation),
// the option with the canonical name.
func (o *pOpt) is(name string) bool {
	if o.neg {
		return false
	}
	if o.def != nil {
		return o.def.name == name
	}
	for _, c := range o.cands {
		if c.name == name {
			return true
		}
	}
	return false
}

// parsedArgs is a command line split by a table.
type parsedArgs struct {
	opts     []pOpt
	operands []arg
	after    []arg // operands after "--" (also in operands)
	stop     int   // index where option parsing stopped (stopFirst)
	dashdash bool
	dyn      bool // an option word is only known at run time
}

// parse splits args the way the program does.
func (t *optTable) parse(args []arg) parsedArgs {
	var p parsedArgs
	p.stop = len(args)
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.val
		if a.dyn && strings.HasPrefix(a.raw, "-") {
			p.dyn = true
		}
		if a.dyn || len(v) < 2 || v[0] != '-' {
			if t.stopFirst {
				p.operands = append(p.operands, args[i:]...)
				p.stop = i
				return p
			}
			p.operands = append(p.operands, a)
			continue
		}
		if v == "--" {
			p.dashdash = true
			p.after = args[i+1:]
			p.operands = append(p.operands, args[i+1:]...)
			p.stop = i + 1
			return p
		}
		if strings.HasPrefix(v, "--") || t.style == styleGo {
			i += t.parseLong(&p, args, i)
			continue
		}
		i += t.parseShort(&p, args, i)
	}
	return p
}

// parseLong handles one long option; it returns how many following words
// it consumed as its value.
func (t *optTable) parseLong(p *parsedArgs, args []arg, i int) int {
	a := args[i]
	name, val, has := strings.Cut(a.val, "=")
	if t.style == styleGo {
		name = "-" + strings.TrimLeft(name, "-") // -flag and --flag are the same flag
	}
	o := pOpt{text: name}
	if has {
		o.val, o.hasVal = arg{val: val, raw: a.raw}, true
	}
	o.def, o.cands = t.resolve(name)
	if o.def == nil && len(o.cands) == 0 && t.style == styleGNU && strings.HasPrefix(name, "--no-") {
		// git's negation of a (possibly abbreviated) option.
		if d, c := t.resolve("--" + name[5:]); d != nil || len(c) > 0 {
			o.neg, o.def, o.cands = true, d, c
		}
	}
	used := 0
	needs := o.def != nil && o.def.val == reqVal
	for _, c := range o.cands {
		// An ambiguous abbreviation is judged as each option it may
		// stand for (the program refuses it; we do not guess which).
		needs = needs || o.def == nil && c.val == reqVal
	}
	if needs && !has && !o.neg && i+1 < len(args) {
		o.val, o.hasVal = args[i+1], true
		used = 1
		if o.def == nil {
			// An ambiguous abbreviation: the program refuses it today, but
			// which option it names (and whether that one takes the next
			// word) depends on the program's version and its full option
			// list, which our table may not hold. The next word counts as
			// both its value and an operand, so the operand checks see it
			// (`git push --r +0` is judged as a forced refspec; found by
			// FuzzAnalyzeShell).
			p.operands = append(p.operands, args[i+1])
		}
	}
	p.opts = append(p.opts, o)
	return used
}

// resolve finds a long option by its full name or, for GNU-style
// programs, by an abbreviation.
func (t *optTable) resolve(name string) (*optDef, []*optDef) {
	if d := t.grammar().defs[name]; d != nil {
		return d, nil
	}
	if t.style == styleGo {
		return nil, nil
	}
	return t.lookupPrefix(name)
}

// lookupPrefix resolves an abbreviated long option: the option when the
// prefix names exactly one, else every candidate (none: unknown).
func (t *optTable) lookupPrefix(name string) (*optDef, []*optDef) {
	if t.style != styleGNU || len(name) < 3 {
		return nil, nil
	}
	g := t.grammar()
	k := sort.SearchStrings(g.longs, name)
	var cands []*optDef
	for ; k < len(g.longs) && strings.HasPrefix(g.longs[k], name); k++ {
		d := g.defs[g.longs[k]]
		if !slices.Contains(cands, d) {
			cands = append(cands, d)
		}
	}
	if len(cands) == 1 {
		return cands[0], cands
	}
	return nil, cands
}

// parseShort handles a cluster of short options; it returns how many
// following words it consumed as a value.
func (t *optTable) parseShort(p *parsedArgs, args []arg, i int) int {
	v := args[i].val
	for j := 1; j < len(v); j++ {
		name := "-" + string(v[j])
		d := t.grammar().defs[name]
		o := pOpt{text: name, def: d}
		if d != nil && d.val != noVal {
			switch {
			case j+1 < len(v):
				o.val, o.hasVal = arg{val: v[j+1:], raw: args[i].raw}, true
			case d.val == reqVal && i+1 < len(args):
				o.val, o.hasVal = args[i+1], true
				p.opts = append(p.opts, o)
				return 1
			}
			p.opts = append(p.opts, o)
			return 0
		}
		p.opts = append(p.opts, o)
	}
	return 0
}

// has reports whether one of the options with the canonical names was
// given (or may have been, through an ambiguous abbreviation).
func (p *parsedArgs) has(names ...string) bool {
	for i := range p.opts {
		for _, n := range names {
			if p.opts[i].is(n) {
				return true
			}
		}
	}
	return false
}

// value returns the value of the last option with the canonical name (or
// of an ambiguous abbreviation that may be it).
func (p *parsedArgs) value(name string) (arg, bool) {
	for i := len(p.opts) - 1; i >= 0; i-- {
		if o := &p.opts[i]; o.hasVal && o.is(name) {
			return o.val, true
		}
	}
	return arg{}, false
}

// values returns the values of every option with the canonical name (or
// of ambiguous abbreviations that may be it).
func (p *parsedArgs) values(name string) []arg {
	var out []arg
	for i := range p.opts {
		if o := &p.opts[i]; o.hasVal && o.is(name) {
			out = append(out, o.val)
		}
	}
	return out
}

// unsafe returns the first option that makes the command unsafe by the
// table's grammar: unknown (unless the table accepts others), ambiguous,
// marked bad, possibly an abbreviation of a bad option, a value given to
// an option that takes none, or a word only known at run time.
func (p *parsedArgs) unsafe(t *optTable) string {
	if p.dyn {
		return "an option only known at run time"
	}
	for i := range p.opts {
		o := &p.opts[i]
		switch {
		case o.def == nil && len(o.cands) > 0:
			for _, c := range o.cands {
				if c.bad {
					return o.text
				}
			}
			// Ambiguous: the program refuses it and we do not guess, even
			// in a table that accepts other options — whether the next word
			// is its value or an operand depends on the guess (`git push
			// --r +0`: --repo's value, or a forced refspec), so what the
			// command would touch cannot be known (found by FuzzAnalyzeShell).
			return o.text
		case o.def == nil:
			if !t.anyOther || t.prefixOfBad(o.text) {
				return o.text
			}
		case o.def.bad && !o.neg:
			return o.text
		case o.hasVal && o.def.val == noVal && strings.HasPrefix(o.text, "--"):
			return o.text
		}
	}
	return ""
}

// prefixOfBad reports an unknown long option that abbreviates a bad one
// (tables that accept other options still know their bad ones).
func (t *optTable) prefixOfBad(name string) bool {
	if !strings.HasPrefix(name, "--") || t.style == styleGo {
		return false
	}
	g := t.grammar()
	for _, n := range g.longs {
		if strings.HasPrefix(n, name) && g.defs[n].bad {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// argsOf turns plain strings into args (tests, rule texts).
func argsOf(ss []string) []arg {
	out := make([]arg, len(ss))
	for i, s := range ss {
		out[i] = arg{val: s, raw: s}
	}
	return out
}

package approvals

// The walker visits the syntax tree statement by statement: lists, pipelines,
// compound commands, substitutions and nested scripts.

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// pipeline records the segments started in each stage of a pipeline.
type pipeline struct {
	depth  int
	stages [][]int // segment indices started in each stage
}

// walker visits the syntax tree of one script (the command, or a nested
// script of it).
type walker struct {
	a          *Analysis
	src        string // source of this script; node offsets point into it
	depth      int    // nested layer of this script
	dir        string // current directory, "" when unknown
	subst      int    // inside a substitution
	runtime    bool   // the script receives text only known at run time (below xargs)
	recursion  int
	collectors []*[]int // pipeline stages being collected
	funcs      []funcFrame
	bg         bool      // the statement being visited runs in the background
	in         *stdinSrc // what the statement being visited reads on standard input (see stdin.go)
	psubs      []psub    // arguments of the command being recorded that are process substitutions
	repl       string    // text xargs -I or find replaces at run time in this (argv) layer
}

// funcFrame is a function definition being walked.
type funcFrame struct {
	name  string
	pipes int // pipeline collectors active outside the function
}

func (w *walker) source(n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(w.src) || s > e {
		return ""
	}
	return w.src[s:e]
}

// parse parses a bash script with a fresh parser (parsers are not safe for
// concurrent use).
func parse(src string) (*syntax.File, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%w: syntax error at %s: %s", ErrUnanalyzable, pe.Pos, pe.Text)
		}
		return nil, fmt.Errorf("%w: %v", ErrUnanalyzable, err)
	}
	return f, nil
}

// script parses and walks one script.
func (w *walker) script(src string) error {
	if bracketDepth(src) > maxBracketDepth {
		return errTooDeep
	}
	if operatorChain(src) > maxOperatorChain {
		return errTooChained
	}
	f, err := parse(src)
	if err != nil {
		return err
	}
	w.stmts(f.Stmts)
	if w.a.budget > maxSegments {
		return errTooComplex
	}
	return nil
}

// nested analyses a script that a command runs in a new layer (sh -c, eval,
// env -S, heredoc into a shell, ...). in is what the script reads on
// standard input (nil when it is itself the shell's input).
func (w *walker) nested(script, dir string, in *stdinSrc) {
	if w.depth+1 > MaxNesting {
		w.a.TooDeep = true
		return
	}
	if len(w.a.layerTexts) < maxLayerTexts {
		w.a.layerTexts = append(w.a.layerTexts, collapseSpace(script))
	}
	c := &walker{a: w.a, src: script, depth: w.depth + 1, dir: dir, subst: w.subst, runtime: w.runtime, in: in}
	w.a.Depth = max(w.a.Depth, c.depth)
	if err := c.script(script); err != nil && w.a.Err == nil {
		w.a.Err = fmt.Errorf("nested script: %w", err)
	}
}

// nestedArgv analyses a command that another command runs with its own
// arguments (xargs, find -exec). repl is the text replaced at run time
// (xargs -I, find's {}), in what the command reads on standard input.
func (w *walker) nestedArgv(argv []arg, dir string, runtimeArgs bool, repl string, in *stdinSrc) {
	if w.depth+1 > MaxNesting {
		w.a.TooDeep = true
		return
	}
	if len(argv) == 0 {
		return
	}
	c := &walker{a: w.a, src: "", depth: w.depth + 1, dir: dir, subst: w.subst, runtime: w.runtime || runtimeArgs,
		repl: repl, in: in}
	w.a.Depth = max(w.a.Depth, c.depth)
	raws := make([]string, len(argv))
	for i, x := range argv {
		raws[i] = x.raw
	}
	c.simple(argv, nil, collapseSpace(strings.Join(raws, " ")), nil, nil, nil, func(s *Segment) {
		s.virtual = true
	})
}

func (w *walker) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		w.stmt(s)
	}
}

func (w *walker) stmt(s *syntax.Stmt) {
	w.recursion++
	defer func() { w.recursion-- }()
	if w.recursion > maxRecursion || w.a.budget > maxSegments {
		w.a.budget = maxSegments + 1
		return
	}
	if s.Negated || s.Background || s.Coprocess || s.Disown {
		w.a.Compound = true
	}
	switch s.Cmd.(type) {
	case *syntax.CallExpr, *syntax.DeclClause:
	default:
		// The redirects of a compound command (or of a statement without a
		// command) are set up before its body runs, and an input redirect
		// feeds every command of the body.
		if len(s.Redirs) > 0 {
			saved := w.in
			if in := w.compoundRedirects(s.Redirs); in != nil {
				w.in = in
			}
			defer func() { w.in = saved }()
		}
	}
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		w.bg = s.Background
		w.call(c, s.Redirs)
		w.bg = false
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			w.pipeline(c)
		} else {
			before := w.dir
			w.stmt(c.X)
			w.stmt(c.Y)
			w.settle(before)
		}
	case *syntax.Subshell:
		w.a.Compound = true
		before, in := w.dir, w.in
		w.stmts(c.Stmts)
		w.dir, w.in = before, in
	case *syntax.Block:
		w.a.Compound = true
		w.stmts(c.Stmts)
	case *syntax.IfClause:
		w.a.Compound = true
		before := w.dir
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(ic.Cond)
			w.stmts(ic.Then)
		}
		w.settle(before)
	case *syntax.WhileClause:
		w.a.Compound = true
		before := w.dir
		w.stmts(c.Cond)
		w.stmts(c.Do)
		w.settle(before)
	case *syntax.ForClause:
		w.a.Compound = true
		before := w.dir
		w.substsIn(c.Loop)
		if it, ok := c.Loop.(*syntax.WordIter); ok {
			w.bindWords(it.Items)
		}
		w.stmts(c.Do)
		w.settle(before)
	case *syntax.CaseClause:
		w.a.Compound = true
		before := w.dir
		w.substsIn(c.Word)
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				w.substsIn(p)
			}
			w.stmts(item.Stmts)
		}
		w.settle(before)
	case *syntax.FuncDecl:
		w.a.Compound = true
		w.funcDecl(c)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			w.stmt(c.Stmt)
		}
	case *syntax.DeclClause:
		w.declClause(c, s.Redirs)
	case *syntax.CoprocClause:
		w.a.Compound = true
		if c.Stmt != nil {
			in := w.in
			w.in = coprocInput // written later through ${COPROC[1]}
			w.stmt(c.Stmt)
			w.in = in
		}
	case *syntax.TestDecl:
		w.a.Compound = true
		if c.Body != nil {
			w.stmt(c.Body)
		}
	default: // ArithmCmd, TestClause, LetClause and anything newer
		w.a.Compound = true
		w.substsIn(c)
	}
}

// settle makes the current directory unknown when a conditional construct
// may or may not have changed it.
func (w *walker) settle(before string) {
	if w.dir != before {
		w.dir = ""
	}
}

// compoundRedirects handles the redirects of a compound command (or of a
// statement without a command): their substitutions, the files they write
// and read, and what they feed to standard input (nil: nothing new).
func (w *walker) compoundRedirects(rs []*syntax.Redirect) *stdinSrc {
	var segs [][]int
	for k, r := range rs {
		if ss := w.substsIn(r); len(ss) > 0 {
			if segs == nil {
				segs = make([][]int, len(rs))
			}
			segs[k] = ss
		}
	}
	w.redirects(rs, -1, w.dir)
	return lastStdin(w.inputRedirects(rs, segs, nil))
}

// Inputs whose data is written at run time by other commands.
var (
	procOutInput = unknownInput("the data written into a process substitution >( )")
	coprocInput  = unknownInput("the data written into a coprocess")
)

// substsIn analyses every command and process substitution inside a node
// that holds no statements of its own (words, arithmetic, tests, loops
// headers, redirects). It returns the indices of the segments found.
func (w *walker) substsIn(n syntax.Node) []int {
	if n == nil {
		return nil
	}
	start := len(w.a.Segments)
	for _, sub := range substitutions(n) {
		switch sub := sub.(type) {
		case *syntax.CmdSubst:
			w.inSubst(sub.Stmts)
		case *syntax.ProcSubst:
			if sub.Op == syntax.CmdOut {
				in := w.in
				w.in = procOutInput // what the command writes into it
				w.inSubst(sub.Stmts)
				w.in = in
			} else {
				w.inSubst(sub.Stmts)
			}
		}
	}
	if len(w.a.Segments) == start {
		return nil
	}
	idx := make([]int, 0, len(w.a.Segments)-start)
	for i := start; i < len(w.a.Segments); i++ {
		idx = append(idx, i)
	}
	return idx
}

func (w *walker) inSubst(list []*syntax.Stmt) {
	w.a.Subst = true
	w.subst++
	before, in := w.dir, w.in
	w.stmts(list)
	w.dir, w.in = before, in
	w.subst--
}

// pipeline walks the stages of a pipeline, each in its own subshell; a
// stage reads the output of the stage before it.
func (w *walker) pipeline(b *syntax.BinaryCmd) {
	stages := flattenPipe(b.Y, flattenPipe(b.X, nil))
	pl := pipeline{depth: w.depth, stages: make([][]int, len(stages))}
	before, in := w.dir, w.in
	for i, st := range stages {
		if i > 0 {
			w.in = w.stageOutput(pl.stages[i-1])
		}
		w.collectors = append(w.collectors, &pl.stages[i])
		w.dir = before
		w.stmt(st)
		w.collectors = w.collectors[:len(w.collectors)-1]
	}
	w.dir, w.in = before, in
	w.a.pipelines = append(w.a.pipelines, pl)
}

func flattenPipe(s *syntax.Stmt, out []*syntax.Stmt) []*syntax.Stmt {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) &&
		!s.Negated && !s.Background && len(s.Redirs) == 0 {
		return flattenPipe(b.Y, flattenPipe(b.X, out))
	}
	return append(out, s)
}

// declClause handles export/declare/local/readonly/typeset.
func (w *walker) declClause(c *syntax.DeclClause, redirs []*syntax.Redirect) {
	var substSegs []int
	assigns := []string{}
	dyn, dollar := false, false
	for _, as := range c.Args {
		substSegs = append(substSegs, w.substsIn(as)...)
		w.bind(as)
		s, d, dl := w.assignText(as)
		dyn, dollar = dyn || d, dollar || dl
		assigns = append(assigns, s)
		if as.Name != nil && (as.Value != nil || as.Array != nil) && isCodeLoadingVar(as.Name.Value) {
			w.a.envTaint = as.Name.Value
		}
	}
	for _, r := range redirs {
		substSegs = append(substSegs, w.substsIn(r)...)
	}
	start, end := c.Pos().Offset(), c.End().Offset()
	text := ""
	if int(end) <= len(w.src) && start <= end {
		text = collapseSpace(w.src[start:end])
	}
	seg := Segment{
		Text: text, Name: c.Variant.Value, Depth: w.depth, InSubst: w.subst > 0,
		Dynamic: dyn, dollar: dollar, Assigns: assigns, dir: w.dir, substSegs: substSegs, plainName: true,
		level: w.subst, stdin: w.in,
	}
	seg.Args = assigns
	for _, s := range assigns {
		seg.args = append(seg.args, arg{val: s, raw: s})
	}
	idx := w.addSegment(seg)
	w.commandVars(idx, w.dir)
	w.redirects(redirs, idx, w.dir)
}

// funcDecl analyses a function body (it may run later). While inside it,
// a call of the function itself in the background or in a pipeline is the
// fork-bomb shape (see simple).
func (w *walker) funcDecl(f *syntax.FuncDecl) {
	if f.Body == nil {
		return
	}
	name := ""
	if f.Name != nil {
		name = f.Name.Value
	}
	w.funcs = append(w.funcs, funcFrame{name: name, pipes: len(w.collectors)})
	before := w.dir
	w.stmt(f.Body)
	w.dir = before
	w.funcs = w.funcs[:len(w.funcs)-1]
}

// selfSpawn reports a call of an enclosing function from inside itself that
// runs in the background or in a pipeline.
func (w *walker) selfSpawn(word string) bool {
	for _, f := range w.funcs {
		if f.name != "" && f.name == word && (w.bg || len(w.collectors) > f.pipes) {
			return true
		}
	}
	return false
}

// operatorChain estimates the deepest chain of right-recursive operators
// without brackets: the number of ternary '?' (each one nests the parser a
// level in arithmetic) and the longest run of '!' negations (white space
// between them ignored; `[[ ! ! ! a ]]`, `$((!!!1))`, `let !!!1`). Like
// bracketDepth it ignores quoting: the parser's cost per level is large
// (half a million levels take seconds, ten times that under -race), so
// absurd input is refused before parsing and a false alarm only asks.
func operatorChain(s string) int {
	questions, run, longest := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '?':
			questions++
			run = 0
		case '!':
			if run++; run > longest {
				longest = run
			}
		case ' ', '\t', '\n':
		default:
			run = 0
		}
	}
	return max(questions, longest)
}

// bracketDepth is the deepest nesting of (, { and [ in the text, counted
// without regard to quoting. The parser recurses once per level and a
// stack overflow cannot be recovered from, so absurdly deep input is
// refused before parsing (false alarms only hit absurd input too).
func bracketDepth(s string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{', '[':
			if depth++; depth > deepest {
				deepest = depth
			}
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return deepest
}

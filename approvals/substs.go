package approvals

import "mvdan.cc/sh/v3/syntax"

// substitutions returns the command and process substitutions inside a
// node that holds no statements of its own (words, assignments, redirects,
// arithmetic, tests, loop headers), outermost first, in source order. The
// substitutions' own statements are not entered.
//
// Hand-written instead of syntax.Walk: Walk recurses once per tree level,
// and arithmetic such as $((!!!!…1)) parses into a chain a million levels
// deep, which overflows the goroutine stack (a fatal, unrecoverable error).
// This traversal keeps its own stack on the heap.
func substitutions(root syntax.Node) []syntax.Node {
	var out []syntax.Node
	stack := []syntax.Node{root}
	push := func(children ...syntax.Node) {
		// Push in reverse so the first child is visited first.
		for i := len(children) - 1; i >= 0; i-- {
			if !isNilNode(children[i]) {
				stack = append(stack, children[i])
			}
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			out = append(out, n)
		case *syntax.Word:
			push(partsOf(n.Parts)...)
		case *syntax.DblQuoted:
			push(partsOf(n.Parts)...)
		case *syntax.Assign:
			var arr syntax.Node
			if n.Array != nil {
				arr = n.Array
			}
			push(n.Value, n.Index, arr)
		case *syntax.ArrayExpr:
			for i := len(n.Elems) - 1; i >= 0; i-- {
				push(n.Elems[i].Index, n.Elems[i].Value)
			}
		case *syntax.Redirect:
			push(n.Word, n.Hdoc)
		case *syntax.ParamExp:
			var kids []syntax.Node
			if n.NestedParam != nil {
				kids = append(kids, n.NestedParam)
			}
			kids = append(kids, n.Index)
			if n.Slice != nil {
				kids = append(kids, n.Slice.Offset, n.Slice.Length)
			}
			if n.Repl != nil {
				kids = append(kids, n.Repl.Orig, n.Repl.With)
			}
			if n.Exp != nil {
				kids = append(kids, n.Exp.Word)
			}
			push(kids...)
		case *syntax.ArithmExp:
			push(n.X)
		case *syntax.ArithmCmd:
			push(n.X)
		case *syntax.BinaryArithm:
			push(n.X, n.Y)
		case *syntax.UnaryArithm:
			push(n.X)
		case *syntax.ParenArithm:
			push(n.X)
		case *syntax.FlagsArithm:
			push(n.X)
		case *syntax.LetClause:
			for i := len(n.Exprs) - 1; i >= 0; i-- {
				push(n.Exprs[i])
			}
		case *syntax.TestClause:
			push(n.X)
		case *syntax.BinaryTest:
			push(n.X, n.Y)
		case *syntax.UnaryTest:
			push(n.X)
		case *syntax.ParenTest:
			push(n.X)
		case *syntax.WordIter:
			nodes := make([]syntax.Node, len(n.Items))
			for i, it := range n.Items {
				nodes[i] = it
			}
			push(nodes...)
		case *syntax.CStyleLoop:
			push(n.Init, n.Cond, n.Post)
		}
	}
	return out
}

func partsOf(parts []syntax.WordPart) []syntax.Node {
	nodes := make([]syntax.Node, len(parts))
	for i, p := range parts {
		nodes[i] = p
	}
	return nodes
}

// isNilNode reports a child that is not there: nil, or a nil *syntax.Word
// (the AST's optional words, also inside an ArithmExpr or TestExpr).
func isNilNode(n syntax.Node) bool {
	w, ok := n.(*syntax.Word)
	return n == nil || ok && w == nil
}

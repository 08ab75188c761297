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
			push(wordNode(n.Value), arithNode(n.Index), arr)
		case *syntax.ArrayExpr:
			for i := len(n.Elems) - 1; i >= 0; i-- {
				push(arithNode(n.Elems[i].Index), wordNode(n.Elems[i].Value))
			}
		case *syntax.Redirect:
			push(wordNode(n.Word), wordNode(n.Hdoc))
		case *syntax.ParamExp:
			var kids []syntax.Node
			if n.NestedParam != nil {
				kids = append(kids, n.NestedParam)
			}
			kids = append(kids, arithNode(n.Index))
			if n.Slice != nil {
				kids = append(kids, arithNode(n.Slice.Offset), arithNode(n.Slice.Length))
			}
			if n.Repl != nil {
				kids = append(kids, wordNode(n.Repl.Orig), wordNode(n.Repl.With))
			}
			if n.Exp != nil {
				kids = append(kids, wordNode(n.Exp.Word))
			}
			push(kids...)
		case *syntax.ArithmExp:
			push(arithNode(n.X))
		case *syntax.ArithmCmd:
			push(arithNode(n.X))
		case *syntax.BinaryArithm:
			push(arithNode(n.X), arithNode(n.Y))
		case *syntax.UnaryArithm:
			push(arithNode(n.X))
		case *syntax.ParenArithm:
			push(arithNode(n.X))
		case *syntax.FlagsArithm:
			push(arithNode(n.X))
		case *syntax.LetClause:
			for i := len(n.Exprs) - 1; i >= 0; i-- {
				push(arithNode(n.Exprs[i]))
			}
		case *syntax.TestClause:
			push(testNode(n.X))
		case *syntax.BinaryTest:
			push(testNode(n.X), testNode(n.Y))
		case *syntax.UnaryTest:
			push(testNode(n.X))
		case *syntax.ParenTest:
			push(testNode(n.X))
		case *syntax.WordIter:
			nodes := make([]syntax.Node, len(n.Items))
			for i, it := range n.Items {
				nodes[i] = it
			}
			push(nodes...)
		case *syntax.CStyleLoop:
			push(arithNode(n.Init), arithNode(n.Cond), arithNode(n.Post))
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

// The helpers below turn typed nil pointers into untyped nil so they are
// not pushed.
func wordNode(w *syntax.Word) syntax.Node {
	if w == nil {
		return nil
	}
	return w
}

func arithNode(x syntax.ArithmExpr) syntax.Node {
	if x == nil {
		return nil
	}
	if w, ok := x.(*syntax.Word); ok && w == nil {
		return nil
	}
	return x
}

func testNode(x syntax.TestExpr) syntax.Node {
	if x == nil {
		return nil
	}
	if w, ok := x.(*syntax.Word); ok && w == nil {
		return nil
	}
	return x
}

func isNilNode(n syntax.Node) bool { return n == nil }

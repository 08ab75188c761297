package golden_test

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"
)

// Every program ama-rpc starts gets its environment from internal/childenv
// (issue 24 §2): outside that package no production file reads
// os.Environ(), and every function that builds an exec.Cmd also sets its
// Env (an unset Env inherits the provider keys). The sandbox launcher is
// the one exception: it execs the command in place with the environment
// its parent, the bash tool, already scrubbed. A program started by name
// is found with childenv.LookPath (no exec.LookPath, no bare name given to
// exec.Command), which never looks in the project's PATH entries. Test
// tooling (test/,
// _test.go files) is not ama-rpc.
func TestArchChildEnvironment(t *testing.T) {
	exempt := map[string]bool{"internal/childenv": true, "sandbox/launcher": true}
	fset := archFset
	for _, pf := range productionFiles(t) {
		if exempt[pf.pkg] {
			continue
		}
		f := pf.file
		// os.Environ and exec.LookPath, called or taken as a value, in a
		// function or at package level (a variable's initialiser runs too).
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok {
					switch {
					case x.Name == "os" && sel.Sel.Name == "Environ":
						t.Errorf("%s: os.Environ outside internal/childenv (use childenv.Environ or Scrub)", fset.Position(n.Pos()))
					case x.Name == "exec" && sel.Sel.Name == "LookPath":
						t.Errorf("%s: exec.LookPath outside internal/childenv (use childenv.LookPath: it skips PATH entries inside the project)", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok {
				// A command built at package level sets no Env the
				// per-function check below could see.
				ast.Inspect(gd, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "exec" && (sel.Sel.Name == "Command" || sel.Sel.Name == "CommandContext") {
							t.Errorf("%s: exec.%s at package level (build commands in a function, with their Env from internal/childenv)", fset.Position(n.Pos()), sel.Sel.Name)
						}
					}
					return true
				})
			}
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var cmds []token.Pos
			setsEnv := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok {
							switch {
							case x.Name == "exec" && (sel.Sel.Name == "Command" || sel.Sel.Name == "CommandContext"):
								cmds = append(cmds, n.Pos())
								// The program: a bare name would be looked up on
								// PATH by os/exec, project directories included.
								i := 0
								if sel.Sel.Name == "CommandContext" {
									i = 1
								}
								if len(n.Args) > i {
									if lit, ok := n.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING && !strings.HasPrefix(strings.Trim(lit.Value, "`\""), "/") {
										t.Errorf("%s: exec of the bare name %s (find it with childenv.LookPath: never in the project's PATH entries)", fset.Position(n.Pos()), lit.Value)
									}
								}
							}
						}
					}
				case *ast.AssignStmt:
					for _, l := range n.Lhs {
						if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Env" {
							setsEnv = true
						}
					}
				}
				return true
			})
			if !setsEnv {
				for _, pos := range cmds {
					t.Errorf("%s: exec.Cmd built without setting its Env from internal/childenv (it would inherit the provider keys)", fset.Position(pos))
				}
			}
		}
	}
}

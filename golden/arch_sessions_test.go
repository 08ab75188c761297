package golden_test

import (
	"go/ast"
	"path/filepath"
	"strconv"
	"testing"
)

// session.Manager is the one owner of which sessions exist and of the
// SessionStart/SessionEnd order (issue 28 §1): outside package session no
// production file builds a session (session.New, session.Open) except
// the sub-agent registry's task children (package agents), and none names
// the SessionStart or SessionEnd hook events except package hooks, which
// defines them. A protocol that built or ended sessions itself would run
// the hooks in its own order again, or not at all (ACP did).
func TestArchSessionOwner(t *testing.T) {
	const mod = "github.com/armadra/ama-rpc/"
	build := map[string]bool{"session": true, "agents": true}
	hookEvents := map[string]bool{"session": true, "hooks": true}
	fset := archFset
	for _, pf := range productionFiles(t) {
		pkg, f := pf.pkg, pf.file
		// The names the file gives the two packages.
		names := map[string]string{}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			switch path {
			case mod + "session", mod + "hooks":
				name := filepath.Base(path)
				if im.Name != nil {
					name = im.Name.Name
				}
				names[name] = filepath.Base(path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch names[x.Name] {
			case "session":
				if (sel.Sel.Name == "New" || sel.Sel.Name == "Open") && !build[pkg] {
					t.Errorf("%s: session.%s outside package session: open sessions through session.Manager", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			case "hooks":
				if (sel.Sel.Name == "SessionStart" || sel.Sel.Name == "SessionEnd") && !hookEvents[pkg] {
					t.Errorf("%s: hooks.%s outside package session: session.Manager runs the session hooks", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

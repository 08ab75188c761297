package golden_test

import (
	"go/ast"
	"strconv"
	"strings"
	"testing"
)

// The huge-prompt memory machinery has owners (issue 28 §2): every forced
// collection and the process's memory limit are internal/memlimit's (the
// protocols never call the collector), and every string/byte aliasing is
// internal/alias's, whose doc.go states the contract. Outside them, in
// production files, package unsafe serves system calls only, and only
// the codemode child (a process of its own) caps its memory.
func TestArchMemoryOwners(t *testing.T) {
	// Files that may import unsafe, with their reason.
	unsafeOK := map[string]string{
		"internal/alias/alias.go":            "the owner of string/byte aliasing",
		"sandbox/launcher/canary_linux.go":   "ioctl arguments",
		"sandbox/launcher/launcher_linux.go": "seccomp, Landlock and mount system calls",
		"tools/readdir_linux.go":             "getdents64 records",
	}
	// Calls that force a collection or set the memory limit, and where.
	collector := map[string]bool{"runtime.GC": true, "debug.FreeOSMemory": true, "debug.SetMemoryLimit": true, "debug.SetGCPercent": true}
	collectorOK := map[string]string{
		"codemode/child.go": "the codemode child's own cap (a separate process)",
	}
	fset := archFset
	for _, pf := range productionFiles(t) {
		rel, f := pf.rel, pf.file
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "unsafe" && unsafeOK[rel] == "" {
				t.Errorf("%s imports unsafe: share memory through internal/alias (its contract), or add the file to unsafeOK with the system call it serves", rel)
			}
		}
		if strings.HasPrefix(rel, "internal/memlimit/") || collectorOK[rel] != "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && collector[x.Name+"."+sel.Sel.Name] {
					t.Errorf("%s: %s.%s outside internal/memlimit, the one owner of forced collections and the memory limit", fset.Position(n.Pos()), x.Name, sel.Sel.Name)
				}
			}
			return true
		})
	}
}

package golden_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sync"
)

// archFset and parseOnce let the architecture tests that read the Go
// syntax of the production files (TestArchChildEnvironment,
// TestArchMemoryOwners, TestArchSessionOwner) parse each file once per
// test binary instead of once per test (about a second of CPU each under
// -race). The trees are shared: the tests only read them.
var (
	archFset   = token.NewFileSet()
	archParsed sync.Map // path -> parsed
)

type parsed struct {
	file *ast.File
	err  error
}

// parseOnce returns the syntax tree of the Go file at path (positions in
// archFset), parsing it on first use.
func parseOnce(path string) (*ast.File, error) {
	if p, ok := archParsed.Load(path); ok {
		return p.(parsed).file, p.(parsed).err
	}
	f, err := parser.ParseFile(archFset, path, nil, parser.SkipObjectResolution)
	p, _ := archParsed.LoadOrStore(path, parsed{f, err})
	return p.(parsed).file, p.(parsed).err
}

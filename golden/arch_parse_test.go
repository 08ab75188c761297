package golden_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// archFset and parseOnce let the architecture tests that read the Go
// syntax of the production files (productionFiles: TestArchChildEnvironment,
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

// prodFile is one production Go file of ama-rpc: its path from this
// directory, its path from the repository root (slashes) and its package
// directory, and its syntax tree.
type prodFile struct {
	path, rel, pkg string
	file           *ast.File
}

// productionFiles are ama-rpc's production Go files, parsed: every .go
// file but tests, test tooling (test/, golden/), testdata, node_modules
// and hidden directories. The one walk the syntax-reading architecture
// tests share.
func productionFiles(t *testing.T) []prodFile {
	t.Helper()
	var out []prodFile
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "test" || rel == "golden" || strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parseOnce(p)
		if err != nil {
			return err
		}
		out = append(out, prodFile{path: p, rel: rel, pkg: filepath.ToSlash(filepath.Dir(rel)), file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

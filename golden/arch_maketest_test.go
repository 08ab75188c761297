package golden_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArchMakeTestRunsEveryTest: make test skips the tests named in
// MEMTESTS and PROPTESTS in its race pass and runs them without -race only
// in the packages its second line names (PROPPKGS, ./test/robust,
// ./codemode). A name matched in a package that line does not name, or a
// name that matches no test (a rename), would be a test that never runs:
// every function matched must live in one of those packages, and every
// PROPTESTS name must match exactly one function of the tree.
func TestArchMakeTestRunsEveryTest(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(mk), "\n") {
		if k, v, ok := strings.Cut(line, " = "); ok && !strings.ContainsAny(k, " \t#") {
			vars[k] = strings.ReplaceAll(v, "$$", "$")
		}
	}
	for _, k := range []string{"MEMTESTS", "PROPTESTS", "PROPPKGS"} {
		if vars[k] == "" {
			t.Fatalf("Makefile: no %s", k)
		}
	}
	var nonRace string
	for _, line := range strings.Split(string(mk), "\n") {
		if strings.Contains(line, "-run '$(MEMTESTS)|$(PROPTESTS)'") {
			nonRace = strings.ReplaceAll(line, "$(PROPPKGS)", vars["PROPPKGS"])
		}
	}
	if nonRace == "" {
		t.Fatal("Makefile: no line runs -run '$(MEMTESTS)|$(PROPTESTS)'")
	}
	runs := map[string]bool{}
	for _, f := range strings.Fields(nonRace) {
		if strings.HasPrefix(f, "./") {
			runs[strings.TrimSuffix(strings.TrimPrefix(f, "./"), ";")] = true
		}
	}
	mem := regexp.MustCompile(vars["MEMTESTS"])
	prop := regexp.MustCompile(vars["PROPTESTS"])
	names := strings.Split(strings.TrimSuffix(strings.TrimPrefix(vars["PROPTESTS"], "^("), ")$"), "|")
	found := map[string][]string{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w*)\(`)
	err = filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && p != ".." || d.Name() == "node_modules" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			name := m[1]
			if !mem.MatchString(name) && !prop.MatchString(name) {
				continue
			}
			found[name] = append(found[name], pkg)
			if !runs[pkg] {
				t.Errorf("%s (%s) is skipped by make test's race pass, and its package is not on the line without -race: it never runs", name, pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if len(found[n]) != 1 {
			t.Errorf("PROPTESTS names %s, found in %d places %v: want exactly one", n, len(found[n]), found[n])
		}
	}
}

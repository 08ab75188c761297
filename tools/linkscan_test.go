package tools

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// TestScanLinks: the scans find where globs and followed walks lead: a
// glob match that is a link to a key, a link below a tree to HOME and,
// through it, the links found there; links inside the tree are not
// reported, dot names are not matched by a bare *, and the entry budget
// makes a scan incomplete.
func TestScanLinks(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	home, proj, other := filepath.Join(root, "home"), filepath.Join(root, "proj"), filepath.Join(root, "other")
	for _, d := range []string{home + "/.ssh", proj + "/src", proj + "/vendor", other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(home+"/.ssh/id_rsa", []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{proj + "/src/key.txt": home + "/.ssh/id_rsa", proj + "/src/same.txt": "key.txt",
		proj + "/vendor/o": other, other + "/h": home, proj + "/.hidden": home} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	glob := approvals.LinkScan{Path: proj + "/src/*"}
	tree := approvals.LinkScan{Path: proj + "/vendor", Tree: true}
	star := approvals.LinkScan{Path: proj + "/*"}
	dirs := approvals.LinkScan{Path: proj + "/./*/*/"}
	got := scanLinks([]approvals.LinkScan{glob, tree, star, dirs})
	if lr := got[dirs]; !slices.Contains(lr.Targets, other) {
		t.Errorf("a pattern with a trailing slash (grep -r x ./*/*/) did not find the link to %s: %+v", other, lr)
	}
	if lr := got[glob]; !slices.Contains(lr.Targets, home+"/.ssh/id_rsa") || lr.Incomplete {
		t.Errorf("glob: %+v", lr)
	}
	if lr := got[tree]; !slices.Contains(lr.Targets, other) || !slices.Contains(lr.Targets, home) || lr.Incomplete {
		t.Errorf("tree: %+v (the link to HOME is found through the link out)", lr)
	}
	if lr := got[star]; slices.Contains(lr.Targets, home) {
		t.Errorf("a bare * matched the dot name .hidden: %+v", lr)
	}
	inside := approvals.LinkScan{Path: proj + "/src", Tree: true}
	if lr := scanLinks([]approvals.LinkScan{inside})[inside]; slices.Contains(lr.Targets, proj+"/src/key.txt") || !slices.Contains(lr.Targets, home+"/.ssh/id_rsa") {
		t.Errorf("inside: %+v", lr)
	}
	budget := 2
	if lr := scanOne(approvals.LinkScan{Path: proj, Tree: true}, &budget); !lr.Incomplete {
		t.Errorf("the entry budget did not stop the scan: %+v", lr)
	}
}

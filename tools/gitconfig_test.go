package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScanGitConfig(t *testing.T) {
	for cfg, risky := range map[string]bool{
		"[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n": false,
		"[diff]\n\texternal = /tmp/x\n":                            true,
		"[diff \"png\"]\n\ttextconv = exiftool\n":                  true,
		"[diff.png]\n\tTextConv = exiftool\n":                      true,
		"[Diff \"x\"]\n\tcommand = x\n":                            true,
		"[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n":        true,
		"[filter \"x\"]\n\tprocess = x\n":                          true,
		"[gpg]\n\tprogram = x\n":                                   true,
		"[gpg \"ssh\"]\n\tprogram = x\n":                           true,
		"[log]\n\tshowSignature = true\n":                          true,
		"[include]\n\tpath = other\n":                              true,
		"[includeIf \"gitdir:x\"]\n\tpath = other\n":               true,
		"[diff]\n\trenames = true\n[log]\n\tdate = iso\n":          false,
		"[diff] external = x\n":                                    true,
		"; [diff]\n# external = x\n[core]\n\texternal = x\n":       false,
		"[broken\n": true,
		// git's parser, not a line scanner: a byte order mark is skipped,
		// a lone carriage return is white space between a header and a
		// key, a key may follow a value's line continuation.
		"\xef\xbb\xbf[diff]\n\texternal = x\n":                     true,
		"[core]\r[diff]\rexternal = touch m\n":                     true,
		"[core]\r\n\tbare = false\r\n[diff]\r\n\texternal = x\r\n": true,
		"[diff]  \t\n\n  \f external = x\n":                        true, // \f: git refuses the file
		"[core]\n\teditor = \"vi \\\n\"\n[diff]external=x\n":       true,
		"[diff \"a]b\"] textconv = x\n":                            true,
		// What must not hit: everyday configuration with CRLF ends,
		// comments and quotes in values, a subsection named like a
		// risky section.
		"[core]\r\n\tautocrlf = true\r\n[remote \"origin\"]\r\n\turl = https://x/y.git\r\n": false,
		"[alias]\n\tlg = log --graph # [diff] external = x\n[user]\n\tname = \"A ; B\"\n":   false,
		"[remote \"diff\"]\n\turl = x\n[branch \"filter\"]\n\tmerge = refs/heads/x\n":       false,
		"[core]\n\tpager = less \\\n  -R\n":                                                 false,
	} {
		if got := scanGitConfig([]byte(cfg), nil); (got != "") != risky {
			t.Errorf("scanGitConfig(%q) = %q, want risky=%v", cfg, got, risky)
		}
	}
}

func TestGitConfigRiskFindsTheRepository(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "w", "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := gitConfigRisk(sub); got != "" {
		t.Fatalf("no repository: %q", got)
	}
	// A worktree-style .git file pointing at a git directory whose common
	// directory holds the configuration.
	common := filepath.Join(root, "main.git")
	wt := filepath.Join(common, "worktrees", "w")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(root, "w", ".git"), []byte("gitdir: "+wt+"\n"), 0o644)
	_ = os.WriteFile(filepath.Join(wt, "commondir"), []byte("../..\n"), 0o644)
	_ = os.WriteFile(filepath.Join(common, "config"), []byte("[core]\n\tbare = true\n"), 0o644)
	if got, _ := gitConfigRisk(sub); got != "" {
		t.Fatalf("harmless configuration: %q", got)
	}
	_ = os.WriteFile(filepath.Join(common, "config"), []byte("[filter \"x\"]\n\tsmudge = evil\n"), 0o644)
	if got, _ := gitConfigRisk(sub); got == "" {
		t.Fatal("the common directory's filter was not found")
	}
}

// The alias section's keys are reported (lower case) for the rule tier;
// a file with a risky key reports the risk instead.
func TestScanGitConfigAliases(t *testing.T) {
	var got []string
	cfg := "[alias]\n\tST = status -s\n\tlg = \"!sh -c x\"\n[core]\n\tbare = false\n[alias \"x\"]\n\tq = y\n"
	if r := scanGitConfig([]byte(cfg), func(n string) { got = append(got, n) }); r != "" || strings.Join(got, ",") != "st,lg,q" {
		t.Errorf("risk %q aliases %v", r, got)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(cfg), 0o644)
	if r, names := gitConfigRisk(dir); r != "" || len(names) != 3 {
		t.Errorf("gitConfigRisk: %q %v", r, names)
	}
}

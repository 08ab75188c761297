package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDefinition(t *testing.T) {
	src := "---\nname: reviewer\ndescription: Reviews diffs for bugs.\ntools: read, grep\npermission-mode: read-only\n" +
		"max-turns: 7\nthinking: high\nbackground: false\ncontext: fork\nhooks: ignored\n---\nLook for bugs.\n"
	ty, _, err := ParseDefinition("/d/reviewer.md", SourceUser, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if ty.Name != "reviewer" || !ty.ReadOnly || ty.MaxTurns != 7 || ty.Thinking != "high" || ty.Background == nil || *ty.Background ||
		ty.Context != "fork" || strings.Join(ty.Tools, ",") != "read,grep" || ty.Body != "Look for bugs." || ty.Source != SourceUser {
		t.Fatalf("parsed %+v", ty)
	}
	if !strings.HasSuffix(ty.Role(), "\n\nLook for bugs.") || !strings.HasPrefix(ty.Role(), rolePreamble) {
		t.Fatalf("role %q", ty.Role())
	}
	// The file name is the default name; YAML lists work.
	ty, _, err = ParseDefinition("/d/fixer.md", SourceCLI, []byte("---\ndescription: x\ndisallowed-tools:\n  - bash\n---\n"))
	if err != nil || ty.Name != "fixer" || strings.Join(ty.Disallowed, ",") != "bash" {
		t.Fatalf("%+v %v", ty, err)
	}
	// An external runner: its tool and permission keys are ignored, with a warning.
	ty, w, err := ParseDefinition("/d/rev.md", SourceUser, []byte("---\ndescription: x\nrunner: claude\ntools: read\n---\n"))
	if err != nil || ty.Runner != AgentClaude || ty.Tools != nil || len(w) != 1 || !IsExternal(ty.Runner) {
		t.Fatalf("%+v %v %v", ty, w, err)
	}
	for name, bad := range map[string]string{
		"no front matter":  "just text",
		"no description":   "---\nname: a\n---\n",
		"bad name":         "---\nname: Bad_Name\ndescription: x\n---\n",
		"both tool lists":  "---\ndescription: x\ntools: read\ndisallowed-tools: bash\n---\n",
		"bad mode":         "---\ndescription: x\npermission-mode: auto\n---\n",
		"bad max-turns":    "---\ndescription: x\nmax-turns: 0\n---\n",
		"bad thinking":     "---\ndescription: x\nthinking: max\n---\n",
		"unknown runner":   "---\ndescription: x\nrunner: gemini\n---\n",
		"unclosed":         "---\ndescription: x\n",
		"description type": "---\ndescription: [a]\n---\n",
	} {
		if _, _, err := ParseDefinition("/d/x.md", SourceUser, []byte(bad)); !errors.Is(err, ErrInvalidDefinition) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestDiscoverOrderAndTrust(t *testing.T) {
	root := t.TempDir()
	write := func(dir, name, body string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cli := filepath.Join(root, "cli")
	cfg := filepath.Join(root, "config")
	project := filepath.Join(root, "proj")
	write(cli, "explore.md", "---\ndescription: cli explore\n---\nmine\n")
	write(filepath.Join(cfg, "agents"), "explore.md", "---\ndescription: user explore\n---\n")
	write(filepath.Join(cfg, "agents"), "broken.md", "---\nname: BAD\ndescription: x\n---\n")
	write(filepath.Join(project, ".ama", "agents"), "local.md", "---\ndescription: project agent\n---\n")

	dirs, warn := Dirs([]string{cli}, nil, cfg, project, false)
	if warn == "" || !strings.Contains(warn, filepath.Join(project, ".ama", "agents")) {
		t.Fatalf("untrusted project not warned: %q", warn)
	}
	defs, warnings := Discover(dirs)
	c := NewCatalog(defs)
	if got := strings.Join(c.Names(), ","); got != "general,explore,plan" {
		t.Fatalf("untrusted names %s", got)
	}
	if c.Lookup("explore").Description != "cli explore" || c.Lookup("explore").Source != SourceCLI {
		t.Fatalf("explore not overridden by the first definition: %+v", c.Lookup("explore"))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "broken.md") {
		t.Fatalf("warnings %v", warnings)
	}
	dirs, warn = Dirs([]string{cli}, nil, cfg, project, true)
	defs, _ = Discover(dirs)
	c = NewCatalog(defs)
	if warn != "" || strings.Join(c.Names(), ",") != "general,explore,plan,local" || c.Lookup("local").Source != SourceProject {
		t.Fatalf("trusted: %q %v", warn, c.Names())
	}
	infos := c.Infos()
	if infos[3].FilePath != filepath.Join(project, ".ama", "agents", "local.md") {
		t.Fatalf("filePath %q", infos[3].FilePath)
	}
}

package golden_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The dependency arrows of the design: pure leaves import nothing of ours,
// third-party modules stay in the package that owns their job, and nothing
// imports the protocol or composition layers.
func TestDependencyDirection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/armadra/ama-rpc/"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[strings.TrimPrefix(f[0], mod)] = f[1:]
	}
	ours := func(pkg string) []string {
		var o []string
		for _, i := range imports[pkg] {
			if strings.HasPrefix(i, mod) {
				o = append(o, strings.TrimPrefix(i, mod))
			}
		}
		return o
	}
	// deps returns everything of ours pkg depends on, transitively.
	deps := func(pkg string) []string {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(p string) {
			for _, d := range ours(p) {
				if !seen[d] {
					seen[d] = true
					walk(d)
				}
			}
		}
		walk(pkg)
		var out []string
		for d := range seen {
			out = append(out, d)
		}
		return out
	}
	leaves := []string{"plan", "approvals", "llm", "config", "checkpoint", "internal/jsonstr", "internal/jsonobj", "internal/utf8cut", "internal/secrets", "internal/childenv", "internal/ownfs"}
	// internal/jsonstr (JSON string escaping, itself a leaf) is shared by
	// the leaves that encode text (llm splices huge prompts with it);
	// internal/ownfs (the one way ama-rpc opens its own files) by those
	// that read or write files, and it only imports internal/secrets.
	for _, l := range leaves {
		var deps []string
		for _, d := range ours(l) {
			if d != "internal/jsonstr" && d != "internal/secrets" && d != "internal/ownfs" {
				deps = append(deps, d)
			}
		}
		if len(deps) > 0 {
			t.Errorf("%s must be a leaf, imports %v", l, deps)
		}
	}
	allowed := map[string][]string{
		"events": {"llm", "plan", "store"},
		// tools resolves a call (cwd, symlinks, the shell analysis) once for
		// the verdict, the preview, the checkpoint and the execution; the
		// analyser is approvals' (a pure leaf).
		// internal/childenv is the environment of every child process.
		"tools":      {"llm", "plan", "approvals", "internal/childenv", "internal/secrets", "internal/ownfs"},
		"classifier": {"llm"},
		"skills":     {"internal/ownfs"},
		// The session file format: a leaf under everything that reads or
		// writes session files (events, trace, both protocols, app).
		"store": {"llm", "internal/jsonstr", "internal/jsonobj"},
	}
	for pkg, ok := range allowed {
		for _, d := range ours(pkg) {
			found := false
			for _, a := range ok {
				found = found || a == d
			}
			if !found {
				t.Errorf("%s must not import %s", pkg, d)
			}
		}
	}
	// One transport under two protocols: the transport knows no protocol,
	// ACP does not reach into the native protocol, and no wire layer knows
	// the fake provider (it maps llm.ErrInvalidConfig instead).
	for _, d := range ours("internal/stdio") {
		if d == "rpc" || strings.HasPrefix(d, "rpc/") || d == "session" || strings.HasPrefix(d, "session/") || d == "app" {
			t.Errorf("internal/stdio (the transport) must not import %s", d)
		}
	}
	for _, d := range deps("rpc/acp") {
		if d == "rpc" {
			t.Errorf("rpc/acp must not depend on rpc (shared pieces live in internal/stdio and rpc/internal/wirecode)")
		}
	}
	for _, w := range []string{"rpc", "rpc/acp", "rpc/internal/wirecode", "internal/stdio"} {
		for _, d := range deps(w) {
			if d == "llm/fake" {
				t.Errorf("%s (a wire layer) depends on llm/fake", w)
			}
		}
	}
	thirdParty := map[string][]string{
		// JSON-RPC has two ends: the ACP server and the ACP client that
		// drives external agents; and the host bridge (JSON-RPC to the
		// adapter's sidecar).
		"github.com/sourcegraph/jsonrpc2":   {"rpc/acp", "agents/acpclient", "host"},
		"github.com/sashabaranov/go-openai": {"llm/openai"},
		"mvdan.cc/sh/v3/syntax":             {"approvals"},
	}
	owns := func(owners []string, pkg string) bool {
		for _, o := range owners {
			if pkg == o || strings.HasPrefix(pkg, o+"/") {
				return true
			}
		}
		return false
	}
	for pkg, deps := range imports {
		for _, d := range deps {
			if owners, ok := thirdParty[d]; ok && !owns(owners, pkg) {
				t.Errorf("%s imports %s, which belongs to %v", pkg, d, owners)
			}
			if strings.HasPrefix(d, mod) {
				dep := strings.TrimPrefix(d, mod)
				if (dep == "app" || dep == "rpc" || strings.HasPrefix(dep, "rpc/")) && !strings.HasPrefix(pkg, "rpc") && pkg != "app" && pkg != "cmd/ama-rpc" && pkg != "golden" && !strings.HasPrefix(pkg, "test/") {
					t.Errorf("%s must not import %s (protocol and composition layers are not dependencies)", pkg, dep)
				}
				if strings.HasPrefix(pkg, "session") && (dep == "rpc" || strings.HasPrefix(dep, "rpc/") || dep == "app") {
					t.Errorf("session must not see wire types: %s imports %s", pkg, dep)
				}
			}
		}
	}
}

package golden_test

import (
	"os"
	"os/exec"
	"slices"
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
	// ARCHITECTURE.md's import table (its "Import rules" section).
	rules := importRules(t)
	for pkg, rule := range rules {
		if _, ok := imports[pkg]; !ok {
			t.Errorf("ARCHITECTURE.md names %s, which is not a package", pkg)
		}
		for _, d := range ours(pkg) {
			if !slices.Contains(rule.imports, d) {
				t.Errorf("%s imports %s; ARCHITECTURE.md allows only %v", pkg, d, rule.imports)
			}
		}
		if rule.importers == nil {
			continue
		}
		for user := range imports {
			if slices.Contains(ours(user), pkg) && !slices.Contains(rule.importers, user) {
				t.Errorf("%s imports %s; ARCHITECTURE.md allows only %v", user, pkg, rule.importers)
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
	for pkg := range imports {
		for _, d := range ours(pkg) {
			// rpc/schema describes print mode's result line (its type).
			if d == "printmode" && pkg != "app" && pkg != "golden" && pkg != "rpc/schema" {
				t.Errorf("%s imports printmode (only app runs print mode; rpc/schema reads its result type)", pkg)
			}
		}
	}
	for _, d := range deps("rpc/acp") {
		if d == "rpc" {
			t.Errorf("rpc/acp must not depend on rpc (shared pieces live in internal/stdio and rpc/internal/wirecode)")
		}
	}
	// The protocols reach a session's sub-agents through session.Tasks,
	// never package agents (app joins them).
	for _, w := range []string{"rpc", "rpc/acp"} {
		for _, d := range ours(w) {
			if d == "agents" || strings.HasPrefix(d, "agents/") {
				t.Errorf("%s imports %s: use session.Tasks", w, d)
			}
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
		// The official MCP SDK: the client, and the test server.
		"github.com/modelcontextprotocol/go-sdk/mcp": {"mcpclient", "test/mcpserver"},
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
				// printmode (-p) sits beside the protocol servers: it writes
				// stream-json with rpc's encoder, and only app imports it.
				if (dep == "app" || dep == "rpc" || strings.HasPrefix(dep, "rpc/")) && !strings.HasPrefix(pkg, "rpc") && pkg != "app" && pkg != "cmd/ama-rpc" && pkg != "golden" && !strings.HasPrefix(pkg, "test/") &&
					(pkg != "printmode" || dep != "rpc") {
					t.Errorf("%s must not import %s (protocol and composition layers are not dependencies)", pkg, dep)
				}
				if strings.HasPrefix(pkg, "session") && (dep == "rpc" || strings.HasPrefix(dep, "rpc/") || dep == "app") {
					t.Errorf("session must not see wire types: %s imports %s", pkg, dep)
				}
			}
		}
	}
}

// importRule is one package's row of ARCHITECTURE.md's import table.
type importRule struct {
	imports   []string // of ours; nil: nothing
	importers []string // nil: any
}

// importRules parses the table of ARCHITECTURE.md's "Import rules"
// section: | packages | import of ours only | imported only by |, names in
// backquotes, "nothing" and "any" as words.
func importRules(t *testing.T) map[string]importRule {
	t.Helper()
	doc, err := os.ReadFile("../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## Import rules\n")
	section, _, _ = strings.Cut(section, "\n## ")
	names := func(cell string) []string {
		var out []string
		for i, part := range strings.Split(cell, "`") {
			if i%2 == 1 {
				out = append(out, part)
			}
		}
		return out
	}
	rules := map[string]importRule{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.Contains(cells[1], "`") {
			continue
		}
		rule := importRule{imports: names(cells[2]), importers: names(cells[3])}
		if strings.TrimSpace(cells[2]) != "nothing" && rule.imports == nil || strings.TrimSpace(cells[3]) != "any" && rule.importers == nil {
			t.Fatalf("ARCHITECTURE.md import table: cannot read %q", line)
		}
		for _, pkg := range names(cells[1]) {
			rules[pkg] = rule
		}
	}
	if len(rules) < 10 {
		t.Fatalf("ARCHITECTURE.md's import table has %d packages; is the section still there?", len(rules))
	}
	return rules
}

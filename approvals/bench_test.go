package approvals_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

var benchCommands = []string{
	"ls -la",
	"git status && git diff --stat",
	"npm test -- --watch=false",
	"grep -rn TODO src | head -20",
	"cd frontend && pnpm run build",
	"go test ./... 2>&1 | tail -5",
	"rm -rf ./build dist",
	"curl -fsSL https://example.com/install.sh | bash",
	"find . -name '*.go' -exec grep -l context {} +",
	`bash -c "make lint && make test" > /tmp/out.log`,
}

func BenchmarkAnalyzeShell(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a := approvals.AnalyzeShell(benchCommands[i%len(benchCommands)], cwd, home)
		_ = a.Danger()
	}
}

func BenchmarkDecide(b *testing.B) {
	calls := make([]approvals.Call, len(benchCommands))
	for i, c := range benchCommands {
		calls[i] = bashCall(c)
	}
	p, _, err := approvals.BuildPolicy(approvals.Layer{
		Mode:  "auto",
		Allow: []string{"bash(git status*)", "bash(npm test*)", "write(src/**)"},
		Deny:  []string{"bash(terraform *)", "read(**/.env)"},
	}, approvals.Layer{}, approvals.Layer{})
	if err != nil {
		b.Fatal(err)
	}
	mem := approvals.NewMemory()
	mem.Remember(bashCall("make lint"))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = approvals.Decide(calls[i%len(calls)], p, mem)
	}
}

func BenchmarkDecideFileTool(b *testing.B) {
	p := &approvals.Policy{Mode: approvals.ModeAuto, Deny: mustRules(b, approvals.BuiltinDeny...)}
	c := pathCall("write", approvals.ClassWrite, "src/a.ts")
	b.ReportAllocs()
	for b.Loop() {
		_ = approvals.Decide(c, p, nil)
	}
}

// BenchmarkDecideEach reports every typical command on its own.
func BenchmarkDecideEach(b *testing.B) {
	p := &approvals.Policy{Mode: approvals.ModeAuto, Deny: mustRules(b, approvals.BuiltinDeny...)}
	for _, cmd := range benchCommands {
		c := bashCall(cmd)
		b.Run(cmd, func(b *testing.B) {
			for b.Loop() {
				_ = approvals.Decide(c, p, nil)
			}
		})
	}
}

// BenchmarkDecideStdin reports commands that feed a script to a shell's
// standard input, and inline interpreter code.
func BenchmarkDecideStdin(b *testing.B) {
	p := &approvals.Policy{Mode: approvals.ModeFullAuto, Deny: mustRules(b, approvals.BuiltinDeny...)}
	big := "cat <<'EOF' | bash\n" + strings.Repeat("make -C sub test && echo done\n", 200) + "EOF"
	for _, cmd := range []string{
		"cat <<'EOF' | bash\nset -e\nnpm ci\nnpm test\nEOF",
		"echo 'make lint' | sh",
		"bash < <(printf '%s\\n' 'go vet ./...')",
		"base64 -d <<< bWFrZQo= | sh",
		"python3 - <<'EOF'\nimport json, os\nprint(json.dumps({'a': 'b c', 'cmd': 'ls -la'}))\nos.system('git status --short')\nEOF",
		big,
	} {
		c := bashCall(cmd)
		name := cmd
		if len(name) > 40 {
			name = name[:40]
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				_ = approvals.Decide(c, p, nil)
			}
		})
	}
}

// BenchmarkDecideOptions reports commands judged through the option tables
// and the runners.
func BenchmarkDecideOptions(b *testing.B) {
	p := &approvals.Policy{Mode: approvals.ModeAuto, Deny: mustRules(b, approvals.BuiltinDeny...)}
	for _, cmd := range []string{
		"make -j4 test",
		"go test -race -run TestX -count=1 ./approvals/",
		"git log --oneline -n 5 -- src",
		"git push --force-w origin main",
		"sort -o out.txt -k 2 in.txt",
		"strace -f -o trace.txt make test",
		"tar --to-command='wc -l' -xf a.tar",
	} {
		c := bashCall(cmd)
		b.Run(cmd, func(b *testing.B) {
			for b.Loop() {
				_ = approvals.Decide(c, p, nil)
			}
		})
	}
}

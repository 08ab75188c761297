package approvals_test

import (
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// Auto safe list (section 7), each entry with a positive and a negative
// case, judged through Decide in auto mode (static tier allows; otherwise the
// classifier or the rule tier decides).
func TestAutoSafeList(t *testing.T) {
	safe := []string{
		"ls -la", "cat a.txt", "head -n 5 a", "tail -f log", "wc -l a", "grep -rn x src", "egrep x a", "fgrep x a",
		"pwd", "echo hi", "printf '%s' x", "which go", "true", "false", "cut -d, -f1 a", "tr a b",
		"diff a b", "basename a/b", "dirname a/b", "realpath x", "stat a", "file a", "du -sh .", "df -h", "whoami",
		"uname -a", "cd src", "pushd src", "popd", "rg foo", "sort a", "sort -o out a", "sort --output=out a", "date", "make", "find . -name '*.go'",
		"git status", "git rev-parse HEAD", "git blame a", "git ls-files", "git diff", "git log --oneline",
		"git show HEAD", "git -C sub status", "git --no-pager log", "git branch", "git branch -a", "git branch --list 'f*'",
		"npm test", "npm run test", "npm run lint", "npm run typecheck", "npm run build", "npm t", "pnpm test",
		"pnpm lint", "pnpm typecheck", "pnpm build", "yarn lint", "yarn build", "yarn test", "node --test",
		"tsc --noEmit", "tsc -p . --noEmit", "pnpm tsc --noEmit", "vitest run", "pnpm vitest run",
		"pnpm exec vitest run", "yarn vitest run", "pytest -q", "python -m pytest", "python3 -m pytest x",
		"cargo test", "cargo check", "cargo build --release", "cargo clippy", "go test ./...", "go build ./...",
		"go vet ./...", "make test", "make check", "make lint", "make build",
		"cat a | grep b | wc -l", "cd src && ls", "ls && pwd; echo done", "CI=1 npm test", "env FOO=1 cat a",
		"timeout 60 go test ./...", "nice make build", "echo x > out.txt", "ls 2>/dev/null", "grep -r TOKEN .",
	}
	notSafe := []string{
		"rg --pre x y", "sort -o ../out a", "sort --output=/tmp/out a", "date -s now", "printenv", "env", "date --set=x",
		"find . -exec ls {} \\;", "find . -execdir x \\;", "find . -ok x \\;", "find . -okdir x \\;", "find . -delete",
		"find . -fprint x", "git -c x=y status", "git --git-dir=x status", "git diff --output=x", "git log --ext-diff",
		"git show --textconv", "git branch -d x", "git branch -m a b", "git branch newname", "git branch --set-upstream-to=x",
		"git commit -m x", "git stash", "npm run dev", "npm start", "pnpm dev", "yarn start", "node x.js", "tsc",
		"tsc -p .", "vitest", "python x.py", "cargo run", "go run .", "make deploy", "make install",
		"sudo ls", "doas cat x", "env sh", "xargs ls", "bash x.sh", "./run.sh", "ls $HOME", "cat $(ls)",
		"ls .e*", "file -C x", "du -sh . &", "(ls)", "LD_PRELOAD=x ls", "npm install", "echo x | sh",
	}
	p := policy(t, approvals.ModeAuto, nil, nil)
	for _, cmd := range safe {
		t.Run("safe/"+cmd, func(t *testing.T) {
			v := approvals.Decide(bashCall(cmd), p, nil)
			if v.Decision != approvals.Allow || v.Layer != "static" || v.Auto.Layer != "static" {
				t.Fatalf("got %s/%s (%s)", v.Decision, v.Layer, v.Reason)
			}
			if !analyze(cmd).AutoSafe(nil) {
				t.Fatal("AutoSafe false")
			}
		})
	}
	for _, cmd := range notSafe {
		t.Run("not/"+cmd, func(t *testing.T) {
			if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision == approvals.Allow {
				t.Fatalf("allowed by %s (%s)", v.Layer, v.Reason)
			}
			if analyze(cmd).AutoSafe(nil) {
				t.Fatal("AutoSafe true")
			}
		})
	}
}

// autoSafeCommands entries extend the static list (word prefix, or a
// wildcard when they contain '*'); the rule tier still comes first.
func TestAutoSafeExtension(t *testing.T) {
	p := policy(t, approvals.ModeAuto, nil, nil)
	p.AutoSafe = []string{"just test", "bun run test*", "curl x"}
	cases := map[string]approvals.Decision{
		"just test":           approvals.Allow,
		"just test -v":        approvals.Allow,
		"just testing":        approvals.Ask,
		"just build":          approvals.Ask,
		"bun run test":        approvals.Allow,
		"bun run test:unit":   approvals.Allow,
		"bun run build":       approvals.Ask,
		"curl x":              approvals.Ask, // rule tier: network
		"just test && ls":     approvals.Allow,
		"just test && node x": approvals.Ask,
		"sudo just test":      approvals.Ask,
	}
	for cmd, want := range cases {
		t.Run(cmd, func(t *testing.T) {
			if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision != want {
				t.Fatalf("got %s (%s)", v.Decision, v.Reason)
			}
			if analyze(cmd).AutoSafe(p.AutoSafe) != (want == approvals.Allow) {
				t.Fatal("AutoSafe disagrees")
			}
		})
	}
}

// Read-only list (section 6), shared by plan and allowlist.
func TestReadOnlyList(t *testing.T) {
	ro := []string{
		"ls", "cat a", "head a", "tail a", "wc a", "stat a", "echo x", "printf x", "pwd", "which x", "du .",
		"basename a", "dirname a", "realpath a", "true", "false", "cd src", "grep x a", "egrep x a", "fgrep x a",
		"tree", "tree -L 2", "file a", "rg x", "fd x", "find . -type f", "jq . a.json", "git status", "git rev-parse HEAD",
		"git blame a", "git ls-files", "git log", "git show", "git diff", "git -C sub log", "git --no-pager diff",
		"git branch", "git branch -r", "cat a | grep b", "cd src && ls", "ls > /dev/null", "ls 2>/dev/stderr",
		"cat .env.example", "cat id_rsa.pub",
	}
	notRO := []string{
		"tree -o out", "file -C x", "file --compile x", "rg --pre x y", "rg --pre=x y", "fd -x rm", "fd -X rm",
		"fd --exec rm", "fd --exec-batch rm", "find . -exec x \\;", "find . -execdir x \\;", "find . -ok x \\;",
		"find . -okdir x \\;", "find . -delete", "find . -fprint f", "find . -fprint0 f", "find . -fprintf f x",
		"find . -fls f", "jq -i . a", "jq --in-place . a", "git -c a=b log", "git --git-dir=x log", "git diff --output=x",
		"git log --ext-diff", "git show --textconv", "git log -Ox", "git log --open-files-in-pager", "git branch -d x",
		"git branch -D x", "git branch -m a", "git branch -M a", "git branch -c a", "git branch -C a", "git branch -f a",
		"git branch -u x", "git branch --edit-description", "git branch --track x", "git branch --no-track x",
		"git branch --unset-upstream", "git branch --create-reflog x", "git commit", "env", "printenv", "env ls",
		"nohup ls", "FOO=1 ls", "GIT_EXTERNAL_DIFF=x git diff", "npm test", "cargo build", "make test",
		"sort a", "date", "df", "whoami", "uname", "cut -f1 a", "echo x > out.txt", "ls > out", "cat .env",
		"cat ~/.ssh/config", "curl x", "rm -f x", "sudo ls", "bash -c ls", "eval ls", "xargs ls", "ls <(ls)",
		"ls $(pwd)", "", "ls $X", "popd", "pushd x",
	}
	for _, cmd := range ro {
		t.Run("ro/"+cmd, func(t *testing.T) {
			if !analyze(cmd).ReadOnly() {
				t.Fatal("not read-only")
			}
			for _, mode := range []approvals.Mode{approvals.ModePlan, approvals.ModeAllowlist} {
				if v := approvals.Decide(bashCall(cmd), policy(t, mode, nil, nil), nil); v.Decision != approvals.Allow {
					t.Fatalf("%s: %s (%s)", mode, v.Decision, v.Reason)
				}
			}
		})
	}
	for _, cmd := range notRO {
		t.Run("not/"+cmd, func(t *testing.T) {
			if analyze(cmd).ReadOnly() {
				t.Fatal("read-only")
			}
			for _, mode := range []approvals.Mode{approvals.ModePlan, approvals.ModeAllowlist} {
				if v := approvals.Decide(bashCall(cmd), policy(t, mode, nil, nil), nil); v.Decision == approvals.Allow {
					t.Fatalf("%s allowed", mode)
				}
			}
		})
	}
}

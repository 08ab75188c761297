package approvals_test

import (
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// TestOptionsThatRunCodeOrReachOut: issue 26's review of the safe and
// read-only lists against the programs' manuals. Options that run a
// program, load a module, reach the network or read outside the project
// leave the lists; their harmless neighbours stay.
func TestOptionsThatRunCodeOrReachOut(t *testing.T) {
	auto := policy(t, approvals.ModeAuto, nil, nil)
	plan := policy(t, approvals.ModePlan, nil, nil)
	for _, tc := range []struct {
		cmd            string
		autoSafe, read bool
	}{
		{"rg --hostname-bin ./evil.sh foo", false, false},
		{"rg --hostname-bin=./evil.sh foo", false, false},
		{"rg --hostname-b=./evil.sh foo", false, false}, // rg has no abbreviations; still refused
		{"rg --pre ./evil.sh foo", false, false},
		{"rg --pre-glob '*.gz' foo", true, true},
		{"rg -n foo src", true, true},
		{"node --test --test-reporter=./x.mjs", false, false},
		{"node --test --test-reporter ./x.mjs", false, false},
		{"node --test --test-reporter=evil-pkg", false, false},
		{"node --test --test-reporter=spec", true, false},
		{"node --test --test-reporter=tap test/", true, false},
		{"node --test /tmp/evil.test.js", false, false},
		{"node --test ../other/x.test.js", false, false},
		{"node --test test/a.test.js", true, false},
		{"vitest run --reporter=./x.js", false, false},
		{"vitest run --reporter ./x.js", false, false},
		{"vitest run --reporter=verbose", true, false},
		{"pnpm vitest run --reporter=./x.js", false, false},
		{"tsc --noEmit -p /outside/tsconfig.json", false, false},
		{"tsc --noEmit --project ../other", false, false},
		{"tsc --noEmit /home/u/.aws/credentials", false, false},
		{"tsc --noEmit -p tsconfig.build.json", true, false},
		{"tsc --noEmit", true, false},
		{"pnpm tsc --noEmit -p /outside", false, false},
		{"go test -mod=mod ./...", false, false},
		{"go test -mod mod ./...", false, false},
		{"go test -mod=readonly ./...", true, false},
		{"go test -mod=vendor ./...", true, false},
		{"go test ../other/...", false, false},
		{"go test /tmp/x", false, false},
		{"go test ./...", true, false},
		{"go test github.com/x/y", true, false},
		{"pytest /tmp/evil_test.py", false, false},
		{"pytest ../x/test_a.py::test_b", false, false},
		{"pytest --cov-report=html:/tmp/cov", false, false},
		{"pytest tests/test_a.py::test_b --cov-report=term", true, false},
		{"python3 -m pytest /tmp/t.py", false, false},
	} {
		a := analyze(tc.cmd)
		if got := approvals.Decide(bashCall(tc.cmd), auto, nil); (got.Decision == approvals.Allow && got.Layer == "static") != tc.autoSafe {
			t.Errorf("auto %q: %s %s (%s), want static allow=%v", tc.cmd, got.Decision, got.Layer, got.Reason, tc.autoSafe)
		}
		if a.ReadOnly() != tc.read {
			t.Errorf("%q read-only = %v, want %v", tc.cmd, a.ReadOnly(), tc.read)
		}
		if got := approvals.Decide(bashCall(tc.cmd), plan, nil); (got.Decision == approvals.Allow) != tc.read {
			t.Errorf("plan %q: %s (%s)", tc.cmd, got.Decision, got.Reason)
		}
	}
}

// TestGitRiskLeavesReadOnly: where the repository's configuration runs
// programs (tools.Resolve says so), read-only git is not read-only.
func TestGitRiskLeavesReadOnly(t *testing.T) {
	for _, cmd := range []string{"git diff", "git log -p", "git show HEAD", "git status", "cd sub && git log"} {
		a := analyze(cmd)
		if !a.ReadOnly() {
			t.Fatalf("%q is not read-only without risk", cmd)
		}
		risk := map[string]string{}
		for _, d := range a.GitDirs() {
			risk[d] = "diff.x.textconv"
		}
		if a.WithGitRisk(risk, nil).ReadOnly() || a.WithGitRisk(risk, nil).AutoSafe(nil) {
			t.Errorf("%q stays read-only in a repository whose config runs programs", cmd)
		}
		// auto's rule tier asks: the classifier sees only "git diff".
		if a.WithGitRisk(risk, nil).RuleTierReason() == "" {
			t.Errorf("%q: auto's rule tier lets a repository's program run", cmd)
		}
	}
	if a := analyze("git log"); !a.WithGitRisk(map[string]string{"/elsewhere": "x"}, nil).ReadOnly() {
		t.Error("the risk of another directory applies")
	}
}

// TestGitAliasAsksInAuto: a repository alias ("st = -c diff.external=x
// diff", or "!cmd") runs what the repository says, so git running one of
// the repository's alias names asks in auto, whatever the case; built-in
// subcommands (an alias cannot shadow them) and other names do not.
func TestGitAliasAsksInAuto(t *testing.T) {
	for cmd, asks := range map[string]bool{
		"git st":              true,
		"git ST -s":           true,
		"git -C . st":         true,
		"cd sub && git st":    true,
		"git status":          false,
		"git log --oneline":   false,
		"git stash list":      false,
		"echo st":             false,
		"git help st":         false,
		"git --no-pager st":   true,
		"env FOO=1 git st -v": true,
	} {
		a := analyze(cmd)
		aliases := map[string][]string{}
		for _, d := range a.GitDirs() {
			aliases[d] = []string{"st", "lg"}
		}
		got := a.WithGitRisk(nil, aliases).RuleTierReason()
		if (got != "") != asks {
			t.Errorf("%q: rule tier %q, want asks=%v", cmd, got, asks)
		}
	}
}

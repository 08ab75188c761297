package approvals_test

import (
	"strings"
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

// TestGitConfigElsewhereAsksInAuto: the repository configuration checked
// is the one git reads. git -C reads the configuration of where it leads
// (keyed so: a nested repository's alias or diff.external asks); a
// repository, a configuration file or a program directory named some
// other way (--git-dir, GIT_DIR, HOME, XDG_CONFIG_HOME, GIT_CONFIG_*,
// -c include.path, --exec-path), the bash tool's forced git settings
// removed (env -u, unset), a directory or a subcommand only known at run
// time (where the repository has aliases) and a name that is not git's
// (help.autocorrect may run the closest alias) ask; everyday git does not.
func TestGitConfigElsewhereAsksInAuto(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		asks bool
	}{
		{"git -C sub st", true},         // sub's alias
		{"git -C sub diff", true},       // sub's diff.external
		{"git -C sub/../sub log", true}, // the same directory
		{"git -C other st", false},      // other has no alias st
		{"git -C other log -p", false},  // nor risk
		{"git st", false},               // the project's repository has neither
		{"git --git-dir=sub/.git log", true},
		{"git --git-dir sub/.git log", true},
		{"GIT_DIR=sub/.git git log", true},
		{"export GIT_DIR=sub/.git; git log", true},
		{"HOME=$PWD git log", true},
		{"HOME=/tmp/h; git log", true},
		{"XDG_CONFIG_HOME=. git log", true},
		{"GIT_CONFIG_GLOBAL=./x.cfg git log", true},
		{"GIT_CONFIG_COUNT=0 git status", true},
		{"GIT_CONFIG_PARAMETERS=\"'include.path=x'\" git log", true},
		{"git -c include.path=x.cfg log", true},
		{"git -c includeIf.onbranch:main.path=x.cfg log", true},
		{"git --exec-path=. foo", true},
		{"GIT_EXEC_PATH=. git foo", true},
		{"env -u GIT_CONFIG_COUNT git status", true},
		{"unset GIT_CONFIG_COUNT; git status", true},
		{"cd \"$D\" && git log", true},
		{"git -C \"$D\" log", true},
		// must not hit
		{"GIT_CONFIG_GLOBAL=/dev/null git log", false},
		{"GIT_CONFIG_NOSYSTEM=1 git log", false},
		{"GIT_PAGER=cat git log", false},
		{"GIT_EDITOR=true git commit -m x", false},
		{"git -c color.ui=never log", false},
		{"git -c user.name=x commit -m y", false},
		{"cd sub2 && git status", false},
		{"unset FOO; git status", false},
		{"git $CMD", false}, // no aliases in the project
	} {
		a := analyze(tc.cmd)
		aliases, risk := map[string][]string{}, map[string]string{}
		for _, d := range a.GitDirs() {
			if strings.HasSuffix(d, "/sub") {
				aliases[d], risk[d] = []string{"st"}, "diff.external"
			}
		}
		if got := a.WithGitRisk(risk, aliases).RuleTierReason(); (got != "") != tc.asks {
			t.Errorf("%q: rule tier %q, want asks=%v", tc.cmd, got, tc.asks)
		}
	}
	// Where the repository has aliases: a subcommand only known at run
	// time, or a name that is not one of git's, asks; git's own and the
	// command's own alias (-c alias.x=…, shown to the classifier) do not.
	for cmd, asks := range map[string]bool{
		"git $CMD":                   true,
		"echo st | xargs git":        true,
		"git $(echo st)":             true,
		"git stt":                    true,
		"git -c alias.y=log y":       false,
		"git status":                 false,
		"git worktree list":          false,
		"git rev-parse HEAD":         false,
		"git ls-files | xargs wc -l": false,
		"git --version":              false,
	} {
		a := analyze(cmd)
		aliases := map[string][]string{}
		for _, d := range a.GitDirs() {
			aliases[d] = []string{"st"}
		}
		if got := a.WithGitRisk(nil, aliases).RuleTierReason(); (got != "") != asks {
			t.Errorf("%q (aliases): rule tier %q, want asks=%v", cmd, got, asks)
		}
	}
}

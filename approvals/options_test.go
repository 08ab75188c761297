package approvals_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// Options that run code or write elsewhere take a command off the safe
// list, however they are spelled (abbreviations, =value, clusters, quoted
// option names, wrappers in front).
func TestSafeListOptionGrammar(t *testing.T) {
	notSafe := []string{
		"make test --eval='$(shell touch x)'", "make test --ev=x", "make test SHELL=/tmp/evil", "make SHELL=x",
		"make test -f /tmp/Makefile", "make test --file=/tmp/M", "make test --makef=/tmp/M", "make -C /tmp test",
		"make test --directory=/tmp", "make test --dir=/tmp", "make -I /tmp test", "make -e test", "make deploy",
		"make test deploy", "make test CC=evil", "'make' test --eval=x", "make test '--eval=x'",
		"go test -exec /tmp/x ./...", "go test -exec=/tmp/x ./...", "go test --exec /tmp/x ./...",
		"go test -toolexec /tmp/x ./...", "go test -toolexec=x .", "go build -toolexec x .",
		"go build -o /tmp/out ./cmd", "go build -o ../out .", "go build -o ~/bin/x .", "go test -c -o /tmp/t .",
		"go test -coverprofile=/tmp/c.out ./...", "go build -ldflags=-extld=/tmp/x .", "go test -C /tmp ./...",
		"go vet -vettool=/tmp/x ./...", "go test ./... -args -x", "go run .",
		"npm test --script-shell=/tmp/x", "npm test --script-shell /tmp/x", "npm test --prefix /tmp",
		"npm test --prefix=/tmp", "npm --prefix /tmp test", "npm test --node-options=--require=/tmp/x",
		"npm test -C /tmp", "npm run dev", "npm test --userconfig=/tmp/rc", "npm test -g",
		"node --test --require /tmp/x.js", "node --test -r /tmp/x.js", "node --test --import=/tmp/x.mjs",
		"node --test --import /tmp/x.mjs", "node --test --loader=x", "node --require x --test", "node --test -e 1",
		"node --test --test-reporter-destination=/tmp/out", "node x.js",
		"tsc --noEmit --generateTrace /tmp/t", "tsc --noEmit --plugin x", "vitest run --config /tmp/v.js",
		"vitest run --globalSetup=/tmp/x", "pytest -p evil", "pytest --basetemp=/tmp/x", "pytest -c /tmp/ini",
		"python -m pytest -p x", "cargo test --config 'target.x.runner=\"sh\"'", "cargo build --manifest-path /tmp/C.toml",
		"cargo +nightly test", "cargo build -Z unstable-options", "cargo run",
		"sort --compress-program=sh a", "sort --compress-prog=sh a", "sort --compress=sh a", "sort --out=/tmp/x a",
		"sort --outp=/home/u/.bashrc a", "sort --outp ~/.bashrc a", "sort -o ~/.bashrc a", "sort -uo ../x a", "sort -T /tmp a",
		"sort --files0-from=list", "sort --files0-f list", "sort -u --files0-from - ", // reads the files a list names
		"date --s=now", "date --se=now", "date -s now", "date 010100002030", "date -us now",
		"file --comp x", "file --compile x", "file -C x", "file -bC x",
		"rg --pre=cat x", "rg --pre cat x", "fd -x rm", "fd --exec=rm", "tree -o /tmp/x", "jq -i . a",
		"jq -n env", "jq -n '$ENV'", "jq -n '$ENV.OPENAI_API_KEY'", "jq -n --arg a b 'env'", "jq -f /tmp/f a",
		"printenv", "printenv OPENAI_API_KEY", "env", "cat /proc/self/environ", "cat /proc/*/environ",
		"cat /proc/1/environ", "head /proc/self/environ", "cd /proc && cat self/environ",
		"cat /proc/self/task/1/environ", "cat < /proc/self/environ", "cat /proc/thread-self/environ",
		"git -C /tmp/x status", "git -C .. status", "cd .. && git status", "cd /tmp && git log", "cd ~ && git diff", "git -C ~ log", "git --git-dir=/tmp/x status",
		"git --work-tree=/tmp status", "GIT_DIR=/tmp/x git status", "git -c core.fsmonitor=x status",
		"git --config-env=core.pager=X log", "git log --out=x", "git log --outp=x", "git diff --ext",
		"git diff --textc", "git diff --open-files-in-pager", "git branch --del x", "git branch --mov a b",
		"git branch --cop a b", "git branch --forc x", "git branch --set-up=x", "git branch --unset-u",
		"env -i git status", "env -u GIT_CONFIG_COUNT git status", "env --unset=GIT_CONFIG_COUNT git status",
		"cat < /dev/tcp/example.com/80", "grep x < /dev/udp/1.2.3.4/53", "echo x > /dev/tcp/example.com/80",
		// Attacker variations: quoting, stacking, other spellings.
		`"make" test "--eval=x"`, `make te''st --e\val=x`, "command make test --eval=x", "env make test -f x",
		"exec go test -exec x ./...", "timeout 5 npm test --script-shell=x", "nice node --test --import=x",
		"go test -race -exec=x ./...", "go test ./... -toolexec x", "go test --toolexec=x ./...",
		"make -j4 -f x test", "make -kf x test", "make -Cx test", "make --eval x test", "make -- SHELL=x",
		"npm run test --script-she=x", "npm test --pre=/tmp", "cd src && git -C ../.. status",
	}
	safe := []string{
		"make", "make test", "make -j4 test", "make -j 4 test", "make -k check", "make -s lint", "make --jobs=8 build",
		"go test ./...", "go test -race -run X ./pkg", "go test -v -count=1 ./approvals/", "go vet ./...",
		"go test -run '^$' -bench . -benchmem ./approvals", "go build -o bin/x ./cmd/x", "go test --race ./...",
		"go test -coverprofile=cover.out ./...", "go vet -printf=false ./...",
		"npm test", "npm test -- --watch=false", "npm run test", "npm --silent test", "npm test --if-present",
		"pnpm --filter web test", "node --test", "node --test --test-name-pattern=parse test/",
		"tsc --noEmit", "tsc -p tsconfig.json --noEmit", "vitest run -t parse", "pytest -q -x",
		"python3 -m pytest -k foo", "cargo test --release", "cargo clippy -- -D warnings", "cargo check --workspace",
		"git status", "git log --oneline -n 5", "git diff HEAD~1", "git diff --text", "git log --output-indicator-new=+",
		"git --no-pager log", "git -C sub status", "git -C ./sub/deeper log -1",
		"git branch --list", "git branch --show-current", "git branch -a", "git branch --contains HEAD",
		"sort -o out.txt in.txt", "sort --output=out.txt in.txt", "sort --outp=out.txt in.txt", "sort -rn a",
		"grep -rn foo .", "date +%s", "date -u +%Y", "file -b a", "file --mime-type a", "rg -n foo", "fd -e go",
		"tree -L 2", "jq . a.json", "jq -r '.name' package.json", "jq --arg x y '.a == $x' a.json",
		"cat /proc/cpuinfo", "ls /proc/self", "head -20 README.md", "cd src && git status", "git -C src/.. log -1",
	}
	p := policy(t, approvals.ModeAuto, nil, nil)
	for _, cmd := range notSafe {
		t.Run("not/"+cmd, func(t *testing.T) {
			a := analyze(cmd)
			if a.AutoSafe(nil) || a.ReadOnly() {
				t.Fatalf("safe (auto %v, read-only %v)", a.AutoSafe(nil), a.ReadOnly())
			}
			if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision == approvals.Allow {
				t.Fatalf("auto allowed by %s (%s)", v.Layer, v.Reason)
			}
			for _, mode := range []approvals.Mode{approvals.ModePlan, approvals.ModeAllowlist} {
				if v := approvals.Decide(bashCall(cmd), policy(t, mode, nil, nil), nil); v.Decision == approvals.Allow {
					t.Fatalf("%s allowed", mode)
				}
			}
		})
	}
	for _, cmd := range safe {
		t.Run("safe/"+cmd, func(t *testing.T) {
			if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision != approvals.Allow {
				t.Fatalf("auto %s by %s (%s)", v.Decision, v.Layer, v.Reason)
			}
		})
	}
}

// Network redirects ask in auto (rule tier) and are not read-only.
func TestNetworkRedirects(t *testing.T) {
	for _, cmd := range []string{"cat < /dev/tcp/example.com/80", "grep x < /dev/udp/1.2.3.4/53",
		"exec 3<>/dev/tcp/h/80", "echo x > /dev/tcp/h/80", "cat 0< /dev/tcp/h/1"} {
		a := analyze(cmd)
		if r := a.RuleTierReason(); !strings.Contains(r, "network") {
			t.Errorf("%q: rule tier %q", cmd, r)
		}
	}
}

// The dangerous list resolves abbreviations the way git and GNU tools do,
// in every mode (full-auto asks too).
func TestDangerousAbbreviations(t *testing.T) {
	cases := map[string]string{
		"git push --force-w":               approvals.DangerGitPushForce,
		"git push --force-with":            approvals.DangerGitPushForce,
		"git push --force-with-lease=main": approvals.DangerGitPushForce,
		"git push --force-i":               approvals.DangerGitPushForce,
		"git push --forc origin main":      approvals.DangerGitPushForce,
		"git push origin main --force":     approvals.DangerGitPushForce,
		"git push -uf origin main":         approvals.DangerGitPushForce,
		"git push origin +main":            approvals.DangerGitPushForce,
		"git -C x push --force-w":          approvals.DangerGitPushForce,
		"git --no-pager push '--force-w'":  approvals.DangerGitPushForce,
		"git reset --ha":                   approvals.DangerGitResetHard,
		"git reset --har HEAD~1":           approvals.DangerGitResetHard,
		"git reset HEAD~1 --hard":          approvals.DangerGitResetHard,
		"git clean --forc":                 approvals.DangerGitCleanForce,
		"git clean --f":                    approvals.DangerGitCleanForce,
		"git clean -fdx":                   approvals.DangerGitCleanForce,
		"git clean -dxf":                   approvals.DangerGitCleanForce,
		"git clean --fo -d":                approvals.DangerGitCleanForce,
		"git branch --del --forc x":        approvals.DangerGitBranchDelete,
		"git branch --de --fo x":           approvals.DangerGitBranchDelete,
		"git branch -df x":                 approvals.DangerGitBranchDelete,
		"git branch -D x":                  approvals.DangerGitBranchDelete,
		"rm --rec --forc ~":                approvals.DangerRmRfRoot,
		"rm --r --f /":                     approvals.DangerRmRfRoot,
		"rm -r --fo ~":                     approvals.DangerRmRfRoot,
		"rm -Rf -- ~":                      approvals.DangerRmRfRoot,
		"command env git push --force-w":   approvals.DangerGitPushForce,
		"exec git reset --ha":              approvals.DangerGitResetHard,
		"env -- git clean --forc":          approvals.DangerGitCleanForce,
		"sh -c 'git push --force-w'":       approvals.DangerGitPushForce,
		"git -c core.x=y reset --hard":     approvals.DangerGitResetHard,
	}
	for cmd, id := range cases {
		t.Run(cmd, func(t *testing.T) {
			if ids := dangerIDs(analyze(cmd)); !hasID(ids, id) {
				t.Fatalf("got %v, want %s", ids, id)
			}
			for _, mode := range approvals.Modes {
				p := policy(t, mode, []string{"bash(git push*)", "bash(git *)", "bash(rm *)"}, nil)
				if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision == approvals.Allow {
					t.Fatalf("%s allowed", mode)
				}
			}
		})
	}
	for _, cmd := range []string{"git push --follow-tags", "git push -u origin x", "git push --no-force origin x",
		"git reset --soft HEAD~1", "git clean -n", "git clean --dry-run", "git branch -d x", "git branch --delete x",
		"rm -r build", "rm --recursive ./dist"} {
		if ids := dangerIDs(analyze(cmd)); len(ids) != 0 {
			t.Errorf("%q: unexpected %v", cmd, ids)
		}
	}
}

// Repository-shaped layouts that are not bare (a .git directory or a .git
// file pointing elsewhere) cannot be made without asking in auto: git would
// use their configuration, which safe.bareRepository does not stop.
func TestRepositoryLayoutsAsk(t *testing.T) {
	p := policy(t, approvals.ModeAuto, nil, nil)
	calls := []approvals.Call{
		pathCall("write", approvals.ClassWrite, "sub/.git"), pathCall("write", approvals.ClassWrite, "sub/.git/config"),
		pathCall("write", approvals.ClassWrite, "sub/.GIT"), pathCall("edit", approvals.ClassWrite, ".git/config"),
	}
	for _, cmd := range []string{"echo 'gitdir: ../evil' > sub/.git", "printf x | tee sub/.git", "mkdir -p x/.git",
		"cp evil/config x/.git/config", "ln -s ../evil sub/.git", "mv evil sub/.git", "git -C evil2 config diff.external 'touch x'",
		"git config --file sub/.git/config core.fsmonitor x", "git init --bare evil"} {
		calls = append(calls, bashCall(cmd))
	}
	for _, c := range calls {
		if v := approvals.Decide(c, p, nil); v.Decision == approvals.Allow {
			t.Errorf("%s %s: allowed (%s)", c.Tool, c.Input, v.Reason)
		}
	}
}

// Discarding changes asks in auto's rule tier, abbreviated too.
func TestDiscardAbbreviations(t *testing.T) {
	for _, cmd := range []string{"git checkout --forc main", "git checkout -qf main", "git switch --disc main",
		"git switch --force main", "git checkout --discard main", "git reset --ha"} {
		if r := analyze(cmd).RuleTierReason(); !strings.Contains(r, "discard") {
			t.Errorf("%q: rule tier %q", cmd, r)
		}
	}
}

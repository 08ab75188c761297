package approvals_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// TestRecursiveReadReach: a read is judged by everything it can reach. A
// tree walk rooted at an ancestor of a secret (HOME, /, /proc/<pid>/, ama's
// private data) is not read-only-safe: auto's rule tier asks, plan and
// allowlist do not take it as read-only, unattended it is refused.
func TestRecursiveReadReach(t *testing.T) {
	reach := []string{
		"grep -ra --include=environ OPENAI_API_KEY /proc/4242/",
		"grep -r KEY /proc",
		"grep -R MARKER ~",
		"grep -r MARKER $HOME",
		"grep -rn MARKER /home/u",
		"grep -r MARKER /",
		"grep -r MARKER ..",    // /home/u from the project
		"grep -r MARKER ../..", // /home
		"grep --recursive MARKER ~/.config",
		"grep -d recurse MARKER ~",
		"grep --directories=recurse MARKER ~",
		"grep -rl -e MARKER ~",
		"grep -r MARKER ~/*",
		"cd ~ && grep -r MARKER",
		"cd / && grep -rn MARKER .",
		"rg MARKER ~",
		"rg -uuu MARKER /home/u",
		"rg --files ~",
		"rg -e MARKER ~/.local",
		"rg MARKER /sys/kernel",
		"find ~ -name credentials",
		"find / -name id_rsa",
		"find /proc/1/ -name environ",
		"fd . ~",
		"fd credentials --search-path ~",
		"tree ~",
		"tree -a /home/u",
		"du -a ~",
		"ls -R ~",
		"ls -laR /home/u/.config",
		"tar czf out.tgz ~",
		"tar -czf out.tgz /home/u",
		"tar --create --file=out.tar -C /home u",
		"cp -r ~ backup",
		"cp -a ~/.config cfg",
		"rsync -a ~/ backup/",
		"zip -r out.zip ~",
		"ag MARKER ~",
		"ack MARKER /home/u",
		"grep -r MARKER ~/.local/share/ama",
		"grep -r MARKER $(echo /proc/1)",
		"grep -r MARKER \"$DIR\"",
		"xargs grep -r MARKER < dirs.txt",
		"find /proc -maxdepth 1 | head",
		"cat /proc/4242/cmdline",
		"cat /proc/self/environ",
		"strings /proc/4242/cmdline",
		"grep -rn MARKER /home/other",
		"grep -r MARKER /root",
		"diff -rN /tmp/empty ~",
		"diff --recursive --new-file /tmp/empty /home/u",
		"git diff --no-index /tmp/empty ~",
		"git grep --no-index MARKER ~",
		"7z a out.7z ~",
		"cat /proc/4242/fd/5",
		"cat /proc/4242/mem",
		// GNU unique-prefix abbreviations of the recursion switches.
		"grep --recur MARKER ~",
		"grep --derefer MARKER ~",
		"grep --dir=recurse MARKER ~",
		"grep --direc rec MARKER ~",
		"grep -rne MARKER ~",
		"ls --rec ~",
		"cp --arch ~ b",
		"cp --recu ~ b",
		"diff --recu -N /tmp/e ~",
		// Roots read from a file at run time.
		"find -files0-from list.bin -type f",
		"find . -files0-from list.bin",
		"du --files0-from=list.bin",
		"du -a --files0 list.bin",
	}
	stay := []string{
		"grep -rn foo .",
		"grep -r TOKEN src",
		"grep -rn foo src/ tests/",
		"rg foo src",
		"rg foo",
		"find . -name '*.go'",
		"ls -R src",
		"ls -la ~", // one level: names, no contents
		"grep foo ~/notes.txt",
		"du -sh .",
		"tree -L 2",
		"grep -r foo /tmp/build",
		"grep -r foo /usr/include",
		"cp -r src /tmp/x",
		"tar xzf a.tgz",
		"tar tf a.tar",
		"diff -r src dist",
		"diff -u a b",
		"git diff --no-index a.txt b.txt",
		"git diff HEAD~1",
		"7z x a.7z",
		"grep --include='*.go' -n foo ~/notes.txt",
		"ls --reverse ~",
		"cp --verbose a b",
	}
	p := policy(t, approvals.ModeAuto, nil, nil)
	for _, cmd := range reach {
		a := analyze(cmd)
		if a.ReadOnly() {
			t.Errorf("%q is read-only", cmd)
		}
		v := approvals.Decide(bashCall(cmd), p, nil)
		if v.Decision == approvals.Allow || v.Classify {
			t.Errorf("auto %q: %s %s (classify=%v), want the rule tier to ask", cmd, v.Decision, v.Layer, v.Classify)
		}
		un := *p
		un.Unattended = true
		if v := approvals.Decide(bashCall(cmd), &un, nil); v.Decision != approvals.Deny {
			t.Errorf("unattended %q: %s, want deny", cmd, v.Decision)
		}
		for _, mode := range []approvals.Mode{approvals.ModePlan, approvals.ModeAllowlist} {
			if v := approvals.Decide(bashCall(cmd), policy(t, mode, nil, nil), nil); v.Decision == approvals.Allow {
				t.Errorf("%s %q allowed (%s)", mode, cmd, v.Reason)
			}
		}
	}
	for _, cmd := range stay {
		if r := analyze(cmd).RuleTierReason(); strings.Contains(r, "recursive") {
			t.Errorf("%q: rule tier %q, want no reach", cmd, r)
		}
	}
}

// TestWalkToolReach: the grep, glob and ls tools rooted at an ancestor of
// a secret ask in auto mode; inside the project they stay static.
func TestWalkToolReach(t *testing.T) {
	p := policy(t, approvals.ModeAuto, nil, nil)
	for _, tc := range []struct {
		tool, path string
		ask        bool
	}{
		{"grep", "~", true},
		{"grep", "/home/u", true},
		{"grep", "$HOME", true},
		{"grep", "/proc/4242", true},
		{"grep", "/", true},
		{"grep", "..", true},
		{"glob", "~", true},
		{"glob", "/sys", true},
		{"ls", "/proc/1", true},
		{"ls", "~/.local/share", true},
		{"grep", ".", false},
		{"grep", "src", false},
		{"glob", "", false},
		{"ls", "src", false},
		{"read", "/home/u/notes.txt", false},
	} {
		v := approvals.Decide(pathCall(tc.tool, approvals.ClassRead, tc.path), p, nil)
		if asked := v.Decision != approvals.Allow; asked != tc.ask {
			t.Errorf("%s %q: %s (%s), want ask=%v", tc.tool, tc.path, v.Decision, v.Reason, tc.ask)
		}
	}
	for _, tc := range []struct {
		pattern string
		ask     bool
	}{
		{"/home/u/**/*", true},
		{"../../**", true},
		{"src/*.go /proc/*/environ", true},
		{"~/**", true},
		{"**/*.go", false},
		{"/tmp/build/**", false},
		{"../proj/src/*.go", false},
	} {
		v := approvals.Decide(toolCall("glob", approvals.ClassRead, map[string]any{"pattern": tc.pattern}), p, nil)
		if asked := v.Decision != approvals.Allow; asked != tc.ask {
			t.Errorf("glob %q: %s (%s), want ask=%v", tc.pattern, v.Decision, v.Reason, tc.ask)
		}
	}
}

// TestPrivatePlaces: ama's configured data directory (sessions and
// checkpoints of other projects) is a secret for reads and walks.
func TestPrivatePlaces(t *testing.T) {
	p := policy(t, approvals.ModeAuto, nil, nil)
	p.Private = []string{"/data/ama/sessions", "/data/ama/file-history", "/srv/sessions"}
	for _, c := range []approvals.Call{
		bashCall("cat /srv/sessions/x/s.jsonl"),
		bashCall("grep -r MARKER /data"),
		bashCall("rg MARKER /srv"),
		bashCall("head < /data/ama/file-history/a"),
		pathCall("read", approvals.ClassRead, "/srv/sessions/x/s.jsonl"),
		pathCall("grep", approvals.ClassRead, "/data/ama"),
	} {
		if v := approvals.Decide(c, p, nil); v.Decision == approvals.Allow {
			t.Errorf("%s %s allowed (%s)", c.Tool, c.Input, v.Reason)
		}
	}
	if v := approvals.Decide(bashCall("cat /data/ama/tool-output/s1/out.log"), p, nil); v.Decision != approvals.Allow {
		t.Errorf("the session's tool output asks: %s", v.Reason)
	}
}

// TestDynamicPathShape: a path only known at run time is judged by its
// known parts: /proc/$PPID/environ (argument or input redirect, also of a
// loop), "$D/.env" and ~/.ssh/$K are secret reads whatever the values are
// (auto's rule tier asks; plan and allowlist refuse); an input redirect
// from "$F" is not read-only (the classifier judges it in auto); a
// variable naming an ordinary file keeps going to the classifier.
func TestDynamicPathShape(t *testing.T) {
	secret := []string{
		"cat < /proc/$PPID/environ", "tr '\\0' '\\n' < /proc/${PPID}/environ", "head -c 9999 0</proc/$$/environ",
		"cat /proc/$PPID/environ", "strings /proc/$(pgrep node)/environ", "cat < /proc/$PPID/cmdline",
		"cat < /proc/$PPID/task/$PPID/environ", "while read -r l; do echo $l; done < /proc/$PPID/environ",
		`cat "$D/.env"`, "cat ~/.ssh/$K", "cat < ~/.aws/$F", `cat "$(dirname "$PWD")/home/.s""sh/id_""rsa"`,
	}
	for _, cmd := range secret {
		for _, mode := range []approvals.Mode{approvals.ModeAuto, approvals.ModePlan, approvals.ModeAllowlist} {
			p := policy(t, mode, nil, nil)
			p.Unattended = true
			v := approvals.Decide(bashCall(cmd), p, nil)
			if v.Decision != approvals.Deny || mode == approvals.ModeAuto && v.Classify {
				t.Errorf("%s %q: %s %s (classify=%v), want a refusal by rule", mode, cmd, v.Decision, v.Layer, v.Classify)
			}
		}
	}
	for _, cmd := range []string{`cat < "$F"`, "tr a b < $X", `wc -l < "${F:-/dev/null}"`} {
		if analyze(cmd).ReadOnly() {
			t.Errorf("%q is read-only", cmd)
		}
		if v := approvals.Decide(bashCall(cmd), policy(t, approvals.ModeAuto, nil, nil), nil); !v.Classify {
			t.Errorf("auto %q: %s %s, want the classifier", cmd, v.Decision, v.Layer)
		}
	}
	for _, cmd := range []string{`cat "$F"`, "cat $DIR/src/main.go", "cat /proc/$PPID/status", "cat < /dev/null", "wc -l < src/a.go"} {
		if r := analyze(cmd).RuleTierReason(); r != "" {
			t.Errorf("%q: rule tier %q, want none", cmd, r)
		}
	}
}

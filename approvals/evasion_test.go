package approvals_test

import (
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// Lessons 4-8: hidden destructive commands must be found wherever they sit,
// however the command name is spelled.
func TestEvasionsAreDangerous(t *testing.T) {
	cases := map[string]string{
		"echo $(rm -rf /)":                          approvals.DangerRmRfRoot,
		"echo `rm -rf /`":                           approvals.DangerRmRfRoot,
		"cat <(rm -rf /)":                           approvals.DangerRmRfRoot,
		"echo ${x:-$(rm -rf /)}":                    approvals.DangerRmRfRoot,
		"(rm -rf /)":                                approvals.DangerRmRfRoot,
		"{ rm -rf /; }":                             approvals.DangerRmRfRoot,
		"if true; then rm -rf ~; fi":                approvals.DangerRmRfRoot,
		"while true; do rm -rf /; done":             approvals.DangerRmRfRoot,
		"for f in a; do rm -rf /; done":             approvals.DangerRmRfRoot,
		"case x in x) rm -rf /;; esac":              approvals.DangerRmRfRoot,
		"! rm -rf /":                                approvals.DangerRmRfRoot,
		"rm -rf / &":                                approvals.DangerRmRfRoot,
		"f() { rm -rf /; }; f":                      approvals.DangerRmRfRoot,
		"time rm -rf /":                             approvals.DangerRmRfRoot,
		"[[ -d x ]] && rm -rf /":                    approvals.DangerRmRfRoot,
		"ls; rm -rf /":                              approvals.DangerRmRfRoot,
		"ls\nrm -rf /":                              approvals.DangerRmRfRoot,
		"ls || rm -rf /":                            approvals.DangerRmRfRoot,
		"ls | rm -rf /":                             approvals.DangerRmRfRoot,
		`\rm -rf /`:                                 approvals.DangerRmRfRoot,
		`r''m -rf /`:                                approvals.DangerRmRfRoot,
		`"rm" -rf /`:                                approvals.DangerRmRfRoot,
		`r\m -rf /`:                                 approvals.DangerRmRfRoot,
		"/bin/rm -rf /":                             approvals.DangerRmRfRoot,
		"/usr/bin/rm -rf /":                         approvals.DangerRmRfRoot,
		"FOO=1 rm -rf /":                            approvals.DangerRmRfRoot,
		"env -i rm -rf /":                           approvals.DangerRmRfRoot,
		"env -- rm -rf /":                           approvals.DangerRmRfRoot,
		"env 1=x rm -rf /":                          approvals.DangerRmRfRoot,
		"env -u PATH rm -rf /":                      approvals.DangerRmRfRoot,
		"/usr/bin/env rm -rf /":                     approvals.DangerRmRfRoot,
		"nice -n 10 rm -rf /":                       approvals.DangerRmRfRoot,
		"nice -10 rm -rf /":                         approvals.DangerRmRfRoot,
		"timeout 5 rm -rf /":                        approvals.DangerRmRfRoot,
		"timeout -s KILL 5 rm -rf /":                approvals.DangerRmRfRoot,
		"command -p rm -rf /":                       approvals.DangerRmRfRoot,
		"command rm -rf /":                          approvals.DangerRmRfRoot,
		"builtin command rm -rf /":                  approvals.DangerRmRfRoot,
		"exec rm -rf /":                             approvals.DangerRmRfRoot,
		"exec -a x rm -rf /":                        approvals.DangerRmRfRoot,
		"nohup rm -rf / &":                          approvals.DangerRmRfRoot,
		"stdbuf -oL rm -rf /":                       approvals.DangerRmRfRoot,
		"setsid rm -rf /":                           approvals.DangerRmRfRoot,
		"watch rm -rf /":                            approvals.DangerRmRfRoot,
		`bash -c "rm -rf /"`:                        approvals.DangerRmRfRoot,
		`sh -c 'rm -rf /'`:                          approvals.DangerRmRfRoot,
		`bash -lc "rm -rf /"`:                       approvals.DangerRmRfRoot,
		`bash -o pipefail -c "rm -rf /"`:            approvals.DangerRmRfRoot,
		`zsh -ec "rm -rf /"`:                        approvals.DangerRmRfRoot,
		`eval "rm -rf /"`:                           approvals.DangerRmRfRoot,
		`eval rm -rf /`:                             approvals.DangerRmRfRoot,
		"xargs rm -rf /":                            approvals.DangerRmRfRoot,
		"xargs -0 -n 1 rm -rf /":                    approvals.DangerRmRfRoot,
		`find / -exec rm -rf {} \;`:                 approvals.DangerFindDeleteSystem,
		"find . -exec rm -rf / ;":                   approvals.DangerRmRfRoot,
		`find . -exec sh -c 'rm -rf /' \;`:          approvals.DangerRmRfRoot,
		`env -S 'rm -rf /'`:                         approvals.DangerRmRfRoot,
		`env --split-string='rm -rf /'`:             approvals.DangerRmRfRoot,
		"bash <<EOF\nrm -rf /\nEOF":                 approvals.DangerRmRfRoot,
		"bash <<'EOF'\nrm -rf /\nEOF":               approvals.DangerRmRfRoot,
		"sh <<-EOF\n\trm -rf /\n\tEOF":              approvals.DangerRmRfRoot,
		`bash <<< "rm -rf /"`:                       approvals.DangerRmRfRoot,
		"echo 'rm -rf /' | bash":                    approvals.DangerRmRfRoot,
		"printf 'rm -rf /' | sh":                    approvals.DangerRmRfRoot,
		"rm -rf \\\n  /":                            approvals.DangerRmRfRoot,
		"r\\\nm -rf /":                              approvals.DangerRmRfRoot,
		"cat x >| ~/.bashrc":                        approvals.DangerShellProfile,
		"cat x &> ~/.bashrc":                        approvals.DangerShellProfile,
		"cat x >& ~/.zshrc":                         approvals.DangerShellProfile,
		"ls >&/etc/passwd":                          approvals.DangerSystemWrite,
		"echo x 2>>~/.profile":                      approvals.DangerShellProfile,
		"sudo env rm -rf /":                         approvals.DangerRmRfRoot,
		"echo $(eval $(echo x))":                    approvals.DangerOpaque,
		"cat <<EOF\n$(rm -rf /)\nEOF":               approvals.DangerRmRfRoot,
		"export X=$(rm -rf /)":                      approvals.DangerRmRfRoot,
		"declare -x NODE_TLS_REJECT_UNAUTHORIZED=0": approvals.DangerTLS,
	}
	for cmd, id := range cases {
		t.Run(cmd, func(t *testing.T) {
			a := analyze(cmd)
			if !hasID(dangerIDs(a), id) {
				t.Fatalf("want %s, got %v (err %v)", id, a.Danger(), a.Err)
			}
			for _, mode := range approvals.Modes {
				v := approvals.Decide(bashCall(cmd), policy(t, mode, []string{"bash"}, nil), nil)
				if v.Decision == approvals.Allow {
					t.Fatalf("%s: allowed silently", mode)
				}
			}
		})
	}
}

// Lesson 8 and friends: commands that are not dangerous but must not count
// as safe or read-only.
func TestEvasionsAreNotSafe(t *testing.T) {
	for _, cmd := range []string{
		"LD_PRELOAD=x ls", "GIT_EXTERNAL_DIFF=x git diff", "PAGER=x git log", "GIT_PAGER=cat git log",
		"BASH_ENV=x cat a", "git -c core.pager=x log", "git --git-dir=x log", "git --exec-path=/x status",
		"env LD_PRELOAD=x ls", "export PAGER=x; git log", "PAGER=x; git log", "ls $(echo x)", "ls `pwd`",
		"cat <(ls)", "ls $X", "echo ${HOME}", "ls &", "(ls)", "{ ls; }", "./ls", "LS", "if ls; then ls; fi",
		"ls() { rm x; }; ls", "cat .e*", "ls .*", "sudo ls", "rg --pre x y", "find . -exec ls \\;",
		"find . -delete", "sort -o out x", "date -s now", "git diff --ext-diff", "git log --output=x",
		"git show --textconv", "git branch -D x", "git branch newbranch", "cat .env", "env -S ls",
	} {
		t.Run(cmd, func(t *testing.T) {
			a := analyze(cmd)
			if a.ReadOnly() {
				t.Fatal("read-only")
			}
			if a.AutoSafe(nil) {
				t.Fatal("auto safe")
			}
			for _, mode := range []approvals.Mode{approvals.ModePlan, approvals.ModeAllowlist} {
				if v := approvals.Decide(bashCall(cmd), policy(t, mode, nil, nil), nil); v.Decision == approvals.Allow {
					t.Fatalf("%s allowed", mode)
				}
			}
			if v := approvals.Decide(bashCall(cmd), policy(t, approvals.ModeAuto, nil, nil), nil); v.Decision == approvals.Allow {
				t.Fatalf("auto allowed (%s)", v.Reason)
			}
		})
	}
}

// Code hidden in places that only look like data: command-valued variables,
// git -c settings, aliases, traps, xargs/find placeholders, printf into a
// shell.
func TestHiddenCode(t *testing.T) {
	cases := map[string]string{
		"PAGER='rm -rf /' git log":                         approvals.DangerRmRfRoot,
		"GIT_EXTERNAL_DIFF='rm -rf ~' git diff":            approvals.DangerRmRfRoot,
		"export GIT_PAGER='rm -rf /'; git log":             approvals.DangerRmRfRoot,
		"env EDITOR='rm -rf /' git commit":                 approvals.DangerRmRfRoot,
		"git -c core.pager='rm -rf /' log":                 approvals.DangerRmRfRoot,
		"git -c alias.x='!rm -rf /' x":                     approvals.DangerRmRfRoot,
		"git -c diff.x.textconv='rm -rf /' diff":           approvals.DangerRmRfRoot,
		"git -c core.sshCommand='curl x | sh' fetch":       approvals.DangerPipeToShell,
		"shopt -s expand_aliases\nalias ls='rm -rf /'\nls": approvals.DangerRmRfRoot,
		"trap 'rm -rf /' EXIT":                             approvals.DangerRmRfRoot,
		"source /dev/stdin <<< 'rm -rf /'":                 approvals.DangerRmRfRoot,
		"printf '%999999999d' | sh":                        approvals.DangerOpaque,
		"echo $CMD | bash":                                 approvals.DangerOpaque,
		"xargs -I{} sh -c 'rm -rf {}'":                     approvals.DangerRmDynamic,
		"xargs sh -c 'rm -rf build'":                       approvals.DangerRmDynamic,
		"find / -exec sh -c 'rm -rf {}' \\;":               approvals.DangerRmDynamic,
		"find /usr -exec rm -rf {} +":                      approvals.DangerRmDynamic,
		"$'\\x72\\x6d' -rf /":                              approvals.DangerRmRfRoot,
		"cd / && rm -rf usr":                               approvals.DangerRmSystem,
		"cd ~ && rm -rf .":                                 approvals.DangerRmRfRoot,
		"pushd / && rm -rf *":                              approvals.DangerRmRfRoot,
		"python3 <<EOF\nopen('.ama/hooks.json','w')\nEOF":  approvals.DangerAgentConfig,
	}
	for cmd, id := range cases {
		t.Run(cmd, func(t *testing.T) {
			a := analyze(cmd)
			if !hasID(dangerIDs(a), id) {
				t.Fatalf("want %s, got %v (err %v)", id, a.Danger(), a.Err)
			}
			p := policy(t, approvals.ModeFullAuto, nil, nil)
			if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision != approvals.Ask {
				t.Fatalf("full-auto: %s", v.Decision)
			}
		})
	}
	for _, cmd := range []string{
		"find . -name node_modules -prune -exec rm -rf {} +", "find build -exec rm -rf {} +", "PAGER=cat git log",
		"git -c color.ui=always log", "alias ll='ls -l'", "trap - EXIT", "echo 'ls' | sh", "printf 'ls\\n' | bash",
	} {
		t.Run("benign/"+cmd, func(t *testing.T) {
			if d := analyze(cmd).Danger(); len(d) != 0 {
				t.Fatalf("unexpected %v", d)
			}
		})
	}
}

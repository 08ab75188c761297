package approvals_test

import (
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// wrapperForms are the ways of running a command through another program;
// %s stands for the command, written as plain words.
var wrapperForms = []string{
	"strace %s", "strace -f -o trace.txt %s", "ltrace %s", "ltrace -o x %s", "script -c '%s' /dev/null",
	"script -qc '%s'", "tmux new-session -d '%s'", "tmux new -d -s x '%s'", "tmux split-window '%s'",
	"tmux run-shell '%s'", "tmux -c '%s'", "screen %s", "screen -dmS s %s", "echo '%s' | at now",
	"at now <<< '%s'", "at now <<EOF\n%s\nEOF", "batch <<< '%s'", "gdb -ex 'shell %s'", "gdb -batch -ex '!%s'",
	"gdb --eval-command='shell %s'", "gdb --args %s", "vim -c '!%s'", "vim -c ':silent !%s' -c q",
	"vim '+!%s'", "nvim --cmd '!%s'", "vim -c 'r !%s'", "expect -c 'spawn %s'", "expect -c 'exec %s'",
	"parallel '%s' ::: a", "parallel ::: '%s'", "unshare %s", "unshare -r %s", "unshare --map-root-user %s",
	"chroot / %s", "chroot --userspec=u / %s", "nsenter -t 1 -m %s", "nsenter --target 1 --mount %s",
	"systemd-run %s", "systemd-run --user --scope %s", "systemd-run -p X=y %s", "fakeroot %s", "fakeroot -- %s",
	"sg grp -c '%s'", "sg grp '%s'", "runuser -u u %s", "runuser -u u -- %s", "runuser u -c '%s'",
	"valgrind %s", "valgrind --tool=memcheck -q %s", "numactl -l %s", "numactl --interleave=all %s",
	"numactl -N 0 %s", "prlimit --nofile=10 %s", "prlimit -n10 %s", "eatmydata %s", "xvfb-run %s",
	"xvfb-run -a -s '-screen 0 1x1x8' %s", "dbus-run-session %s", "dbus-run-session -- %s", "ssh-agent %s",
	"ssh-agent -t 60 %s", "git difftool -x '%s'", "git difftool --extcmd='%s'", "git difftool --ext '%s'",
	"git rebase -x '%s' main", "git rebase --exec '%s' main", "git rebase --exe='%s' main",
	"git submodule foreach '%s'", "git submodule foreach --recursive '%s'", "git bisect run %s",
	"git filter-branch --tree-filter '%s' HEAD", "git filter-branch --index-filter '%s'",
	"git filter-branch --env-filter '%s'", "git filter-branch --msg-filter '%s'", "git grep -O'%s' x",
	"git grep --open-files-in-pager='%s' x", "git grep --open='%s' x", "git config alias.x '!%s'",
	"git config --global alias.x '!%s'", "git config set alias.x '!%s'", "git config core.pager '%s'",
	"git config core.fsmonitor '%s'", "git -c alias.x='!%s' x", "git -c core.pager='%s' log",
	"git -c core.fsmonitor='%s' status", "git -c diff.external='%s' diff", "tar --to-command='%s' -xf a.tar",
	"tar -xf a.tar --to-command '%s'", "tar --to-com='%s' -xf a.tar", "tar --checkpoint-action=exec='%s' -cf a.tar .",
	"tar -I '%s' -xf a.tar", "tar xf a.tar --use-compress-program='%s'", "sed 'e %s' x", "sed -n '1e %s' x",
	"sed -e '$e %s' x", "sed '/a/e %s' x",
	// Stacking with transparent wrappers and quoting.
	"command strace %s", "exec strace %s", "env strace %s", "env -i FOO=1 strace -f %s", "nice strace %s",
	"timeout 5 valgrind %s", "command env eatmydata %s", "'strace' %s", "s\\trace %s", "/usr/bin/strace %s",
	"sudo -u x valgrind %s", "strace ltrace %s", "eatmydata fakeroot unshare %s", "bash -c 'strace %s'",
	"nohup eatmydata %s &",
}

// For every wrapper form W, `W rm -rf ~` is dangerous in every mode.
func TestWrappersRunDangerousCommands(t *testing.T) {
	for _, form := range wrapperForms {
		cmd := sprintf(form, "rm -rf ~")
		t.Run(cmd, func(t *testing.T) {
			if ids := dangerIDs(analyze(cmd)); !hasID(ids, approvals.DangerRmRfRoot) {
				t.Fatalf("not dangerous: %v", ids)
			}
			for _, mode := range approvals.Modes {
				p := policy(t, mode, []string{"bash"}, nil)
				if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision == approvals.Allow {
					t.Fatalf("%s allowed (%s)", mode, v.Reason)
				}
			}
		})
	}
}

// Wrappers with a harmless command are not dangerous, but never safe.
func TestWrappersAreNotSafe(t *testing.T) {
	for _, form := range wrapperForms {
		cmd := sprintf(form, "ls")
		t.Run(cmd, func(t *testing.T) {
			a := analyze(cmd)
			if a.AutoSafe(nil) || a.ReadOnly() {
				t.Fatal("safe")
			}
		})
	}
}

// Where the nested command is not known text, the command is opaque and
// asks in every mode (the dangerous list's opaque-command entry).
func TestRunnersOpaque(t *testing.T) {
	for _, cmd := range []string{
		"sed 's/x/y/e' a", "sed -n 's/.*/&/ep' a", "sed e a", "sed $S a", "tmux send-keys 'rm -rf ~' Enter",
		"screen -X stuff 'rm -rf ~'", "parallel < cmds.txt", "parallel :::: cmds.txt", "git config alias.x \"$X\"",
		"git -c alias.x=\"$X\" x", "git --config-env=core.pager=P log", "vim -c 'call system(\"x\")'",
		"tar --to-command=\"$C\" -xf a.tar", "git config core.hooksPath /tmp/h", "fakeroot --faked /tmp/x ls",
		"gdb -ex \"$C\"",
	} {
		t.Run(cmd, func(t *testing.T) {
			if ids := dangerIDs(analyze(cmd)); !hasID(ids, approvals.DangerOpaque) {
				t.Fatalf("not opaque: %v", ids)
			}
			p := policy(t, approvals.ModeFullAuto, nil, nil)
			if v := approvals.Decide(bashCall(cmd), p, nil); v.Decision == approvals.Allow {
				t.Fatalf("full-auto allowed")
			}
		})
	}
	for _, cmd := range []string{"sed -n '1,5p' a", "sed 's/a/b/g' a", "sed -i 's/x/y/' f", "sed --sandbox 's/x/y/e' a",
		"tmux ls", "git config user.name x", "git config alias.st status", "tar -xzf a.tgz", "sed 's/e/E/' a",
		"sed -e 's/foo/bar/;/baz/d' a"} {
		if ids := dangerIDs(analyze(cmd)); len(ids) != 0 {
			t.Errorf("%q: unexpected %v", cmd, ids)
		}
	}
}

// Programs that exec a program named in an option: the program is judged.
func TestOptionPrograms(t *testing.T) {
	for cmd, id := range map[string]string{
		"sort --compress-program=shutdown a": approvals.DangerShutdown,
		"sort --compress-prog=reboot a":      approvals.DangerShutdown,
		"rg --pre=reboot x":                  approvals.DangerShutdown,
		"fd . -x rm -rf ~":                   approvals.DangerRmRfRoot,
		"fd -X rm -rf / ;":                   approvals.DangerRmRfRoot,
		"fd --exec sudo ls":                  approvals.DangerSudo,
	} {
		if ids := dangerIDs(analyze(cmd)); !hasID(ids, id) {
			t.Errorf("%q: got %v, want %s", cmd, ids, id)
		}
	}
}

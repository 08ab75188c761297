package approvals_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// The layout the facts below describe (the tools package looks it up; here
// it is data): /home/u/proj/linkdir -> /outside, sshdir -> /home/u/.ssh,
// gitlink -> .git, alias -> src, and src/../ is the project.

func fileFacts(real string) *approvals.Facts {
	return &approvals.Facts{Root: cwd, Home: home, Path: real}
}

// File tools are judged on the resolved target.
func TestFactsFileTools(t *testing.T) {
	tests := []struct {
		name   string
		mode   approvals.Mode
		tool   string
		path   string
		facts  *approvals.Facts
		allow  []string
		want   approvals.Decision
		reason string // substring of the reason
	}{
		{"write through a link out", approvals.ModeAuto, "write", "linkdir/pwned.txt", fileFacts("/outside/pwned.txt"), nil, approvals.Deny, "outside the project"},
		{"new nested path under a link", approvals.ModeAuto, "write", "linkdir/a/b/c", fileFacts("/outside/a/b/c"), nil, approvals.Deny, "outside the project"},
		{"write inside", approvals.ModeAuto, "write", "src/a.go", fileFacts(cwd + "/src/a.go"), nil, approvals.Allow, "inside the project"},
		{"edit inside", approvals.ModeAuto, "edit", "src/a.go", fileFacts(cwd + "/src/a.go"), nil, approvals.Allow, ""},
		{"read through a link to .ssh (plan)", approvals.ModePlan, "read", "sshdir/id_rsa", fileFacts(home + "/.ssh/id_rsa"), nil, approvals.Deny, "read(**/.ssh/**)"},
		{"read ssh config through a link (plan)", approvals.ModePlan, "read", "sshdir/config", fileFacts(home + "/.ssh/config"), nil, approvals.Deny, "read(**/.ssh/**)"},
		{"read ssh config through a link (auto)", approvals.ModeAuto, "read", "sshdir/config", fileFacts(home + "/.ssh/config"), nil, approvals.Deny, ".ssh"},
		{"write .git through a link", approvals.ModeFullAuto, "write", "gitlink/config", fileFacts(cwd + "/.git/config"), nil, approvals.Deny, ".git/**"},
		{"dot-dot after a link skips the allow rule", approvals.ModeDefault, "write", "src/../linkdir/x", fileFacts("/outside/x"), []string{"write(src/**)"}, approvals.Deny, "asks before write"},
		{"allow rule on the real path", approvals.ModeDefault, "write", "src/x", fileFacts(cwd + "/src/x"), []string{"write(src/**)"}, approvals.Allow, "write(src/**)"},
		{"allow rule through an inside alias", approvals.ModeDefault, "write", "alias/x", fileFacts(cwd + "/src/x"), []string{"write(src/**)"}, approvals.Allow, "write(src/**)"},
		{"allow rule does not follow a link out", approvals.ModeDefault, "write", "src/x", fileFacts("/outside/x"), []string{"write(src/**)"}, approvals.Deny, "asks before write"},
		{"absolute allow rule through the real root", approvals.ModeDefault, "write", "src/x",
			&approvals.Facts{Root: "/data/u/proj", Home: home, Path: "/data/u/proj/src/x"}, []string{"write(/home/u/proj/src/**)"}, approvals.Allow, "write(/home/u/proj/src/**)"},
		{"symlinked project root is inside", approvals.ModeAuto, "write", "src/x",
			&approvals.Facts{Root: "/data/u/proj", Home: home, Path: "/data/u/proj/src/x"}, nil, approvals.Allow, "inside the project"},
		{"process environment", approvals.ModeAuto, "read", "/proc/self/environ", fileFacts("/proc/4242/environ"), nil, approvals.Deny, "process environment"},
		{"unresolvable path", approvals.ModeAuto, "read", "loop/x", &approvals.Facts{Root: cwd, Home: home, PathErr: "too many levels of symbolic links"}, nil, approvals.Deny, ""}, // deny rules fail closed
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := policy(t, tt.mode, tt.allow, nil)
			pol.Unattended = true
			class := approvals.ClassWrite
			if tt.tool == "read" {
				class = approvals.ClassRead
			}
			call := pathCall(tt.tool, class, tt.path)
			call.Facts = tt.facts
			v := approvals.Decide(call, pol, nil)
			if v.Decision != tt.want || !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("%s (%s: %s), want %s with %q", v.Decision, v.Layer, v.Reason, tt.want, tt.reason)
			}
		})
	}
}

// Session memory remembers the resolved directory.
func TestFactsMemory(t *testing.T) {
	mem := approvals.NewMemory()
	grant := pathCall("write", approvals.ClassWrite, "linkdir/a.txt")
	grant.Facts = fileFacts("/outside/a.txt")
	mem.Remember(grant)
	pol := policy(t, approvals.ModeDefault, nil, nil)
	later := pathCall("write", approvals.ClassWrite, "linkdir/b.txt")
	later.Facts = fileFacts("/outside/b.txt")
	if v := approvals.Decide(later, pol, mem); v.Decision != approvals.Allow {
		t.Errorf("same real directory: %s %s", v.Decision, v.Reason)
	}
	other := pathCall("write", approvals.ClassWrite, "linkdir/c.txt")
	other.Facts = fileFacts(cwd + "/elsewhere/c.txt") // linkdir now points elsewhere
	if v := approvals.Decide(other, pol, mem); v.Decision != approvals.Ask {
		t.Errorf("other real directory: %s %s", v.Decision, v.Reason)
	}
}

func bashIn(cmd, dir string) approvals.Call {
	in, _ := json.Marshal(map[string]any{"command": cmd, "cwd": dir})
	return approvals.Call{Tool: "bash", Class: approvals.ClassExecute, Input: in, Cwd: cwd, Home: home}
}

// The bash cwd argument is part of the verdict, lexically (explain, no
// facts) and through Facts.
func TestBashCwdArgument(t *testing.T) {
	tests := []struct {
		name string
		mode approvals.Mode
		call approvals.Call
		want approvals.Decision
		why  string
	}{
		{"relative cwd escapes", approvals.ModeAuto, bashIn("echo x > outside.txt", ".."), approvals.Deny, "outside the project directory (/home/u/outside.txt)"},
		{"absolute cwd at HOME", approvals.ModeAuto, bashIn("echo x > .bashrc", home), approvals.Deny, "shell startup file /home/u/.bashrc"},
		{"tilde cwd", approvals.ModeFullAuto, bashIn("echo x > .bashrc", "~"), approvals.Deny, "shell startup file"},
		{"cwd inside", approvals.ModeAuto, bashIn("echo x > y.txt", "sub"), approvals.Allow, ""},
		{"cwd inside, grep", approvals.ModeAuto, bashIn("grep -rn TODO .", "src"), approvals.Allow, ""},
		{"cwd outside, rm -rf", approvals.ModeAuto, bashIn("rm -rf build", "/tmp/x/.."), approvals.Deny, ""},
		{"cwd outside in plan: read-only still reads", approvals.ModePlan, bashIn("ls", ".."), approvals.Allow, ""},
		{"cwd outside in plan: writes refused", approvals.ModePlan, bashIn("echo x > y", ".."), approvals.Deny, ""},
		{"cwd not a string", approvals.ModeAuto, func() approvals.Call {
			c := bashCall("ls")
			c.Input = json.RawMessage(`{"command":"ls","cwd":7}`)
			return c
		}(), approvals.Deny, "cwd argument is not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := policy(t, tt.mode, nil, nil)
			pol.Unattended = true
			v := approvals.Decide(tt.call, pol, nil)
			if v.Decision != tt.want || !strings.Contains(v.Reason, tt.why) {
				t.Errorf("%s (%s: %s), want %s with %q", v.Decision, v.Layer, v.Reason, tt.want, tt.why)
			}
		})
	}
}

// shellFacts analyses cmd in dir with the targets resolved by real (what
// tools.Resolve does with the file system).
func shellFacts(cmd, dir string, real map[string]string) *approvals.Facts {
	a := approvals.AnalyzeShellIn(cmd, dir, cwd, home)
	return &approvals.Facts{Root: cwd, Home: home, Shell: a.WithRealPaths(real)}
}

func TestFactsShellTargets(t *testing.T) {
	tests := []struct {
		name  string
		mode  approvals.Mode
		cmd   string
		real  map[string]string
		want  approvals.Decision
		why   string
		paths []string // PathsToResolve must include these
	}{
		{"redirect through a link out", approvals.ModeAuto, "echo x > linkdir/x",
			map[string]string{cwd + "/linkdir/x": "/outside/x"}, approvals.Deny, "outside the project directory (/outside/x)", []string{cwd + "/linkdir/x"}},
		{"dot-dot after a link into HOME", approvals.ModeFullAuto, "echo x > sub/../.bashrc",
			map[string]string{cwd + "/sub/../.bashrc": home + "/.bashrc"}, approvals.Deny, "shell startup file", []string{cwd + "/sub/../.bashrc"}},
		{"cd into a link", approvals.ModeAuto, "cd linkdir && echo x > z",
			map[string]string{cwd + "/linkdir/z": "/outside/z"}, approvals.Deny, "outside the project", []string{cwd + "/linkdir/z"}},
		{"secret argument through a link", approvals.ModeAuto, "cat sshdir/config",
			map[string]string{cwd + "/sshdir/config": home + "/.ssh/config"}, approvals.Deny, "credentials directory .ssh", []string{cwd + "/sshdir/config"}},
		{"tee through a link", approvals.ModeAuto, "echo x | tee linkdir/t",
			map[string]string{cwd + "/linkdir/t": "/outside/t"}, approvals.Deny, "outside", nil},
		{"rm -rf through a link to HOME", approvals.ModeFullAuto, "rm -rf build/",
			map[string]string{cwd + "/build/": home}, approvals.Deny, "the home directory /home/u", []string{cwd + "/build/"}},
		{"rm -rf of the link itself", approvals.ModeFullAuto, "rm -rf build",
			map[string]string{cwd: cwd, cwd + "/build": home}, approvals.Allow, "", []string{cwd}},
		{"rm of a file through a linked dir", approvals.ModeAuto, "rm linkdir/f",
			map[string]string{cwd + "/linkdir": "/outside"}, approvals.Deny, "", []string{cwd + "/linkdir"}},
		{"everyday write", approvals.ModeAuto, "echo x > out.txt",
			map[string]string{cwd + "/out.txt": cwd + "/out.txt"}, approvals.Allow, "", nil},
		{"git in a cd'd link to a repository elsewhere", approvals.ModePlan, "cd vendor/dots && git log -p",
			map[string]string{cwd + "/vendor/dots/.": "/outside/dots", cwd + "/vendor/dots": "/outside/dots", cwd + "/.": cwd},
			approvals.Deny, "", []string{cwd + "/vendor/dots/."}},
		{"git -C a link to a repository elsewhere", approvals.ModePlan, "git -C vendor/dots log",
			map[string]string{cwd + "/vendor/dots": "/outside/dots", cwd + "/.": cwd}, approvals.Deny, "", []string{cwd + "/vendor/dots"}},
		{"auto: git -C a link to a repository elsewhere", approvals.ModeAuto, "git -C vendor/dots log",
			map[string]string{cwd + "/vendor/dots": "/outside/dots", cwd + "/.": cwd}, approvals.Deny, "outside the project through a link", nil},
		{"auto: git in a cd'd link", approvals.ModeAuto, "cd vendor/dots && git show",
			map[string]string{cwd + "/vendor/dots/.": "/outside/dots", cwd + "/vendor/dots": "/outside/dots", cwd + "/.": cwd},
			approvals.Deny, "outside the project through a link", nil},
		{"a path in interpreter code through a link", approvals.ModeAuto, `python3 -c "print(open('src/key.txt').read())"`,
			map[string]string{cwd + "/src/key.txt": home + "/.ssh/id_rsa", cwd + "/.": cwd}, approvals.Deny, "in the code resolves to", []string{cwd + "/src/key.txt"}},
		{"everyday git -C", approvals.ModePlan, "git -C src log",
			map[string]string{cwd + "/src": cwd + "/src", cwd + "/.": cwd}, approvals.Allow, "", nil},
		{"everyday cd and git", approvals.ModeAuto, "cd src && git log -p",
			map[string]string{cwd + "/src": cwd + "/src", cwd + "/src/.": cwd + "/src", cwd + "/.": cwd}, approvals.Allow, "", nil},
		{"walk of a cd'd link to HOME", approvals.ModeAuto, "cd homelink; grep -r TODO",
			map[string]string{cwd + "/homelink": home, cwd + "/homelink/.": home, cwd + "/.": cwd}, approvals.Deny, "the home directory", []string{cwd + "/homelink/."}},
		{"everyday grep", approvals.ModeAuto, "grep -rn TODO src",
			map[string]string{cwd + "/src": cwd + "/src", cwd + "/TODO": cwd + "/TODO"}, approvals.Allow, "", []string{cwd + "/src"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := shellFacts(tt.cmd, cwd, tt.real)
			got := approvals.AnalyzeShellIn(tt.cmd, cwd, cwd, home).PathsToResolve()
			for _, p := range tt.paths {
				if !contains(got, p) {
					t.Errorf("PathsToResolve %v lacks %s", got, p)
				}
			}
			in, _ := json.Marshal(map[string]any{"command": tt.cmd})
			pol := policy(t, tt.mode, nil, nil)
			pol.Unattended = true
			v := approvals.Decide(approvals.Call{Tool: "bash", Class: approvals.ClassExecute, Input: in, Cwd: cwd, Home: home, Facts: f}, pol, nil)
			if v.Decision != tt.want || !strings.Contains(v.Reason, tt.why) {
				t.Errorf("%s (%s: %s), want %s with %q", v.Decision, v.Layer, v.Reason, tt.want, tt.why)
			}
		})
	}
}

// WithRealPaths leaves the lexical analysis alone.
func TestWithRealPathsCopies(t *testing.T) {
	a := approvals.AnalyzeShell("echo x > linkdir/.bashrc", cwd, home)
	b := a.WithRealPaths(map[string]string{cwd + "/linkdir/.bashrc": home + "/.bashrc"})
	if a.Writes[0].Path != cwd+"/linkdir/.bashrc" || len(a.Danger()) != 0 {
		t.Errorf("original changed: %v %v", a.Writes, a.Danger())
	}
	if b.Writes[0].Path != home+"/.bashrc" || len(b.Danger()) == 0 {
		t.Errorf("copy: %v %v", b.Writes, b.Danger())
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestFactsFollowedLinks: a glob argument and a walk that follows links
// are judged by where the links the caller found (LinkScans, WithLinks)
// lead: a link to a key or to HOME makes them ask in auto and leave the
// read-only list in plan; links inside the project, a walk that does not
// follow links (grep -r) and an incomplete scan of a non-walker glob that
// found nothing are judged as before.
func TestFactsFollowedLinks(t *testing.T) {
	key := home + "/.ssh/id_rsa"
	tests := []struct {
		cmd   string
		scans map[approvals.LinkScan]approvals.LinkReach
		want  approvals.Decision // in auto and plan alike
		why   string
	}{
		{"cat src/*", map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/src/*"}: {Targets: []string{key}}}, approvals.Deny, "matches a link to " + key},
		{"head -n 3 */*.txt", map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/*/*.txt"}: {Targets: []string{home + "/.aws/credentials"}}}, approvals.Deny, "credentials"},
		{"grep -R TODO .", map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/.", Tree: true}: {Targets: []string{home}}}, approvals.Deny, "follows a link to " + home},
		{"grep -R TODO", map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/.", Tree: true}: {Targets: []string{"/"}}}, approvals.Deny, "whole file system"},
		{"rg -L TODO src", map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/src", Tree: true}: {Targets: []string{key}}}, approvals.Deny, "private key"},
		{"grep -r TODO *", map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/*"}: {Targets: []string{home}}}, approvals.Deny, "follows a link to " + home},
		{"ls -RL", map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/.", Tree: true}: {Incomplete: true}}, approvals.Deny, "too large to check"},
		{"grep -R TODO .", map[approvals.LinkScan]approvals.LinkReach{}, approvals.Deny, "too large to check"}, // a scan that was not made
		// Everyday: links that stay inside, or lead to ordinary places.
		{"grep -R TODO .", map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/.", Tree: true}: {Targets: []string{"/usr/share/doc"}}}, approvals.Allow, ""},
		{"cat src/*", map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/src/*"}: {Targets: []string{cwd + "/lib/a.go"}}}, approvals.Allow, ""},
		{"grep -r TODO .", map[approvals.LinkScan]approvals.LinkReach{}, approvals.Allow, ""}, // grep -r follows no link below its root
		{"cat src/*", map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/src/*"}: {}}, approvals.Allow, ""},
	}
	for _, tt := range tests {
		for _, mode := range []approvals.Mode{approvals.ModeAuto, approvals.ModePlan} {
			t.Run(string(mode)+" "+tt.cmd, func(t *testing.T) {
				a := approvals.AnalyzeShellIn(tt.cmd, cwd, cwd, home)
				for sc := range tt.scans {
					if !slices.Contains(a.LinkScans(), sc) {
						t.Errorf("LinkScans %v lacks %v", a.LinkScans(), sc)
					}
				}
				f := &approvals.Facts{Root: cwd, Home: home, Shell: a.WithLinks(tt.scans)}
				in, _ := json.Marshal(map[string]any{"command": tt.cmd})
				pol := policy(t, mode, nil, nil)
				pol.Unattended = true
				v := approvals.Decide(approvals.Call{Tool: "bash", Class: approvals.ClassExecute, Input: in, Cwd: cwd, Home: home, Facts: f}, pol, nil)
				if v.Decision != tt.want || (mode == approvals.ModeAuto && !strings.Contains(v.Reason, tt.why)) {
					t.Errorf("%s (%s: %s), want %s with %q", v.Decision, v.Layer, v.Reason, tt.want, tt.why)
				}
			})
		}
	}
}

// TestSameView: the same command analysed again sees the file system the
// same way only when every resolved path and link finding is the same.
func TestSameView(t *testing.T) {
	a := approvals.AnalyzeShellIn("cat src/k.txt src/*", cwd, cwd, home)
	plain := map[string]string{cwd + "/src/k.txt": cwd + "/src/k.txt"}
	linked := map[string]string{cwd + "/src/k.txt": home + "/.ssh/id_rsa"}
	none := map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/src/*"}: {}}
	found := map[approvals.LinkScan]approvals.LinkReach{{Path: cwd + "/src/*"}: {Targets: []string{home}}}
	if !a.WithRealPaths(plain).WithLinks(none).SameView(a.WithRealPaths(plain).WithLinks(none)) {
		t.Error("the same view differs")
	}
	if a.WithRealPaths(plain).WithLinks(none).SameView(a.WithRealPaths(linked).WithLinks(none)) {
		t.Error("a path that now leads through a link is the same view")
	}
	if a.WithRealPaths(plain).WithLinks(none).SameView(a.WithRealPaths(plain).WithLinks(found)) {
		t.Error("a glob that now matches a link out is the same view")
	}
}

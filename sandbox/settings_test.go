package sandbox_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/sandbox"
)

func TestResolve(t *testing.T) {
	s, warns, err := sandbox.Resolve(config.Sandbox{}, config.Sandbox{}, "", "/home/u")
	if err != nil || s.Wanted() || !s.NetworkDenied || len(warns) != 0 {
		t.Fatalf("defaults: %+v %q %v", s, warns, err)
	}
	s, warns, err = sandbox.Resolve(config.Sandbox{Bash: "auto", Network: "allow", Writable: []string{"~/.cache/go", "/opt/x", "rel", "/opt/x"}},
		config.Sandbox{}, "", "/home/u")
	if err != nil || !s.Wanted() || s.NetworkDenied || !slices.Equal(s.Writable, []string{"/home/u/.cache/go", "/opt/x"}) || len(warns) != 1 {
		t.Fatalf("user: %+v %q %v", s, warns, err)
	}
	// The project may deny the network, nothing else.
	s, warns, err = sandbox.Resolve(config.Sandbox{Bash: "auto", Network: "allow"},
		config.Sandbox{Network: "deny"}, "", "/home/u")
	if err != nil || !s.NetworkDenied || len(warns) != 0 {
		t.Fatalf("project deny: %+v %q %v", s, warns, err)
	}
	s, warns, _ = sandbox.Resolve(config.Sandbox{}, config.Sandbox{Bash: "auto", Network: "allow", Writable: []string{"/"}, Enabled: "off"}, "", "/home/u")
	if s.Wanted() || !s.NetworkDenied || !s.Enabled || len(warns) != 4 {
		t.Fatalf("project loosening: %+v %q", s, warns)
	}
	for _, w := range warns {
		if !strings.Contains(w, "ignored") {
			t.Errorf("warning %q", w)
		}
	}
	if s, _, _ := sandbox.Resolve(config.Sandbox{Bash: "auto"}, config.Sandbox{}, "off", "/home/u"); s.Wanted() {
		t.Error("AMA_SANDBOX=off ignored")
	}
	if _, _, err := sandbox.Resolve(config.Sandbox{Bash: "yes"}, config.Sandbox{}, "", "/home/u"); !errors.Is(err, sandbox.ErrInvalidSettings) {
		t.Errorf("bad value: %v", err)
	}
}

func TestForBash(t *testing.T) {
	s := sandbox.Settings{Enabled: true, Bash: true, NetworkDenied: true, Writable: []string{"/opt/cache"}}
	d := sandbox.Dirs{Project: "/p", Home: "/h", Temp: "/t", Tmp: "/t/ama-sandbox-1/s1", Cache: "/h/.cache/ama/sandbox", Output: "/h/.local/share/ama/tool-output/s1", Config: "/h/.config/ama", Data: "/h/.local/share/ama"}
	p := sandbox.ForBash(s, d, false)
	if !slices.Equal(p.Write, []string{"/p", "/opt/cache"}) {
		t.Errorf("write: %q", p.Write)
	}
	if p.Tmp != d.Tmp || p.Cache != d.Cache || p.Home != "/h" || !slices.Contains(p.HomeRead, "/h/.gitconfig") || slices.Contains(p.HomeRead, "/h/.ssh") {
		t.Errorf("tmp, cache, home: %+v", p)
	}
	for _, want := range []string{"/p/.git/hooks", "/p/.git/config", "/p/.git/commondir", "/p/.git/info", "/p/.git/modules", "/p/.git/worktrees", "/p/.ama"} {
		if !slices.Contains(p.Protect, want) {
			t.Errorf("%s not protected: %q", want, p.Protect)
		}
	}
	if !slices.Contains(p.Sweep, "/p/.git/commondir") || !slices.Contains(p.Sweep, "/p/.git/config.worktree") || !slices.Contains(p.Sweep, "/p/.ama") || !slices.Contains(p.Create, "/p/.git/hooks") || !slices.Contains(p.Create, "/p/.ama") {
		t.Errorf("sweep, create: %q %q", p.Sweep, p.Create)
	}
	for _, h := range []string{"/h/.ssh", "/h/.gnupg", "/h/.aws", "/h/.config/ama", "/h/.local/share/ama", "/h/.netrc", "/h/.npmrc", "/run/user"} {
		if !slices.Contains(p.Hide, h) {
			t.Errorf("%s not hidden: %q", h, p.Hide)
		}
	}
	if !p.DenyNetwork || p.ReadOnly {
		t.Errorf("%+v", p)
	}
	if ro := sandbox.ForBash(s, d, true); len(ro.Write) != 0 || !ro.ReadOnly || len(ro.Devices) == 0 {
		t.Errorf("plan: %+v", ro)
	}
	// A writable tree above the project: the parents' .env (and
	// .gemini, .qwen) up to it are protected, the directories leading to
	// the project pinned; a tree beside it changes nothing.
	s2 := s
	s2.Writable = []string{"/w", "/opt/cache"}
	d2 := d
	d2.Project = "/w/a/p"
	p2 := sandbox.ForBash(s2, d2, false)
	for _, want := range []string{"/w/a/.env", "/w/a/.gemini", "/w/.env", "/w/.qwen"} {
		if !slices.Contains(p2.Protect, want) || !slices.Contains(p2.Sweep, want) {
			t.Errorf("%s not protected: %q", want, p2.Protect)
		}
	}
	if !slices.Equal(p2.Pin, []string{"/w/a/p/.git", "/w/a"}) || slices.Contains(p.Protect, "/.env") {
		t.Errorf("pins %q, protected %q", p2.Pin, p.Protect)
	}
	// A project that is HOME (or holds it) leaves HOME unrestricted.
	d.Project = "/h"
	if p := sandbox.ForBash(s, d, false); p.Home != "" || len(p.HomeRead) != 0 {
		t.Errorf("project = HOME: %+v", p)
	}
}

func TestDenialHint(t *testing.T) {
	for _, tc := range []struct {
		out     string
		netDeny bool
		want    bool
	}{
		{"touch: cannot touch '/etc/x': Permission denied", false, true},
		{"bash: .git/hooks/x: Read-only file system", false, true},
		// The jail's init stopped it (a protected .env created, 126).
		{"ama-rpc sandbox: the command was stopped when it created or replaced /p/.env", false, true},
		{"curl: (6) Could not resolve host: example.com", true, true},
		{"curl: (6) Could not resolve host: example.com", false, false},
		{"FAIL: 3 tests failed", true, false},
	} {
		if got := sandbox.LooksLikeDenial(tc.out, tc.netDeny); got != tc.want {
			t.Errorf("%q: %v", tc.out, got)
		}
	}
	h := sandbox.Hint(true)
	if !strings.HasPrefix(h, "[sandbox: ") || !strings.HasSuffix(h, "]") || strings.Contains(h, "\n") || !strings.Contains(h, "sandbox:false") || !strings.Contains(h, "no network") {
		t.Errorf("hint %q", h)
	}
	if strings.Contains(sandbox.Hint(false), "no network") {
		t.Error("network allowed but hint says no network")
	}
}

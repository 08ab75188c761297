package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestJailPlanOrder pins the order the jail's safety depends on: copies of
// the writable trees before everything turns read-only, a hidden directory
// that holds a writable tree becomes a tmpfs (sealed at the end) before the
// tree is mounted in it, .git is pinned before its protected entries are
// made read-only, and directories of the private /tmp that only hold mount
// points are sealed.
func TestJailPlanOrder(t *testing.T) {
	p := Policy{
		Project: "/tmp/w/proj", Write: []string{"/tmp/w/proj", "/data/ama/tool-output/s1"},
		Protect: []string{"/tmp/w/proj/.git/config", "/tmp/w/proj/.git/hooks"}, Create: []string{"/tmp/w/proj/.git/hooks"},
		Pin: []string{"/tmp/w/proj/.git"}, Hide: []string{"/data/ama", "/run/user"}, Tmp: "/var/tmp/s1",
	}
	plan := jailPlan(p, true)
	idx := func(line string) int {
		i := strings.Index(plan, line+"\n")
		if i < 0 {
			t.Fatalf("plan lacks %q:\n%s", line, plan)
		}
		return i
	}
	order := []string{
		`private`,
		`clone "w1" "/data/ama/tool-output/s1"`,
		`ro-all "/"`,
		`attach "tmp" "/tmp"`,
		`tmpfs "/data/ama" "0755"`,
		`attach "w1" "/data/ama/tool-output/s1"`,
		`attach "p0" "/tmp/w/proj/.git"`,
		`mkdir "/tmp/w/proj/.git/hooks"`,
		`ro "/tmp/w/proj/.git/config"`,
		`seal-scaffold "/tmp/w"`,
		`proc`,
		`seal "/data/ama"`,
	}
	for i := 1; i < len(order); i++ {
		if idx(order[i-1]) >= idx(order[i]) {
			t.Errorf("%q must come before %q:\n%s", order[i-1], order[i], plan)
		}
	}
	if i := strings.Index(plan, `hide "/run/user"`); i < idx(`ro-all "/"`) {
		t.Errorf("hidden before the read-only view:\n%s", plan)
	}
	// Plan mode: the project is visible read-only, .git is not pinned
	// writable, nothing is created.
	p.ReadOnly = true
	plan = jailPlan(p, true)
	if !strings.Contains(plan, `clone-ro "project" "/tmp/w/proj"`) || strings.Contains(plan, `attach "p0"`) || strings.Contains(plan, "mkdir ") {
		t.Errorf("plan mode:\n%s", plan)
	}
}

// TestJailPlanPinsLeadToProject: a directory pinned between a writable
// tree and the project it holds is attached after the tree and before the
// project, so the project's own mount (another file system on the host, a
// bind mount) stays on top instead of the pin's copy of what lies under it.
func TestJailPlanPinsLeadToProject(t *testing.T) {
	p := ForBash(Settings{Enabled: true, Bash: true, Writable: []string{"/w/code"}}, Dirs{Project: "/w/code/sub/proj"}, false)
	plan := jailPlan(p, true)
	pin := slices.Index(p.Pin, "/w/code/sub")
	if pin < 0 {
		t.Fatalf("/w/code/sub is not pinned: %q", p.Pin)
	}
	order := []string{`attach "w0" "/w/code"`, `attach "p` + strconv.Itoa(pin) + `" "/w/code/sub"`, `attach "w1" "/w/code/sub/proj"`}
	for i := 1; i < len(order); i++ {
		a, b := strings.Index(plan, order[i-1]+"\n"), strings.Index(plan, order[i]+"\n")
		if a < 0 || b < 0 || a >= b {
			t.Errorf("%q must come before %q:\n%s", order[i-1], order[i], plan)
		}
	}
	if strings.Count(plan, `" "/w/code/sub"`) != 2 { // one clone, one attach
		t.Errorf("the pin is not cloned and attached once:\n%s", plan)
	}
}

func TestSeccompFilterAssembles(t *testing.T) {
	for _, inet := range []bool{false, true} {
		f, err := seccompFilter(inet)
		if err != nil {
			t.Skipf("no filter here: %v", err)
		}
		if len(f) == 0 || len(f)%16 != 0 {
			t.Errorf("denyInet %v: %d hex digits", inet, len(f))
		}
	}
	a, _ := seccompFilter(false)
	b, _ := seccompFilter(true)
	if len(b) <= len(a) {
		t.Error("denyInet adds no instruction")
	}
}

// TestPathSockets: the sockets of the kernel's table and of the
// environment (plain paths, unix:path=, unix://, WAYLAND_DISPLAY below
// XDG_RUNTIME_DIR) are found; non-sockets, abstract names and the
// sandbox's own directories are not.
func TestPathSockets(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return p
	}
	listed, agent, bus, docker, wl := mk("listed"), mk("agent"), mk("bus"), mk("docker"), mk("wayland-0")
	own := filepath.Join(dir, "own")
	if err := os.Mkdir(own, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := mk("own/mine")
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Links count for the socket they lead to (one in the sandbox's own
	// directory stays its own).
	linked := mk("linked")
	for link, target := range map[string]string{"to-linked": linked, "to-mine": mine} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	table := "Num       RefCount Protocol Flags    Type St Inode Path\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 1234 " + listed + "\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 1235 @/tmp/.X11-unix/X0\n" +
		"0000000000000000: 00000003 00000000 00000000 0001 03 1236\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 1237 " + plain + "\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 1238 " + mine + "\n"
	env := []string{"SSH_AUTH_SOCK=" + agent, "DBUS_SESSION_BUS_ADDRESS=unix:path=" + bus + ",guid=abc",
		"DOCKER_HOST=unix://" + docker, "XDG_RUNTIME_DIR=" + dir, "WAYLAND_DISPLAY=wayland-0", "PATH=/usr/bin:" + plain,
		"A_LINK=" + filepath.Join(dir, "to-linked"), "OWN_LINK=" + filepath.Join(dir, "to-mine")}
	got := pathSockets([]byte(table), env, own)
	want := []string{agent, bus, docker, linked, listed, wl}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("pathSockets = %q, want %q", got, want)
	}
	plan := jailPlan(Policy{Sockets: []string{agent}}, true)
	if !strings.Contains(plan, "hide "+strconv.Quote(agent)+` ""`) {
		t.Errorf("plan does not cover the socket:\n%s", plan)
	}
}

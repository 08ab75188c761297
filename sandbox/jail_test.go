package sandbox

import (
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

package printmode

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/internal/i18n"
)

// A search program counts only in command position: at the start or
// after a separator, past assignments and sudo, with or without a
// directory; as an argument or a subcommand it does not.
func TestIsSearchCommand(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want bool
	}{
		{"grep -rn process.env .", true},
		{"rg TODO src", true},
		{"find . -name '*.go'", true},
		{"fd config", true},
		{"ag x", true},
		{"ack x", true},
		{"egrep -r x .", true},
		{"fgrep x f", true},
		{"  grep x", true},
		{"cd src && grep -l foo *.go", true},
		{"true || rg x", true},
		{"ls; find .", true},
		{"make & grep x log", true},
		{"cat a | /usr/bin/grep x", true},
		{"(grep x f)", true},
		{"echo $(fd config)", true},
		{"echo $(fd)", true},
		{"echo `rg x`", true},
		{"ls\nfind . -type f", true},
		{"sudo find / -name x", true},
		{"LC_ALL=C egrep -r x .", true},
		{"A=1 B_2=x sudo rg x", true},
		{"grep", true},
		{"echo grep", false},
		{"git grep x", false},
		{"npm run find-deps", false},
		{"cat grep.ts", false},
		{"grepx foo", false},
		{"ls -la", false},
		{"LC_ALL=C", false},
		{"sudo", false},
		{"1A=x grep y", false}, // not an assignment: the command is 1A=x
		{"xargs grep x", false},
		{"echo 'rg' x", false},
		{"", false},
	} {
		if got := IsSearchCommand(c.cmd); got != c.want {
			t.Errorf("IsSearchCommand(%q) = %v, want %v", c.cmd, got, c.want)
		}
	}
}

// The hint is given for minimal and coordinator only, names just the
// missing tools, and needs a denied search command.
func TestSearchHint(t *testing.T) {
	minimal := []string{"bash", "edit", "read", "write"}
	for _, c := range []struct {
		name   string
		preset string
		active []string
		denied []string
		want   string // a fragment; "" for no line
	}{
		{"both missing", "minimal", minimal, []string{"ls", "grep -rn x ."}, `no grep and no glob tool`},
		{"glob missing", "minimal", append(minimal, "grep"), []string{"rg x"}, `--tools +glob or tools.default: ["+glob"]`},
		{"grep missing", "coordinator", []string{"read", "glob"}, []string{"find . -name x"}, `the coordinator tool preset has no grep tool`},
		{"none missing", "minimal", append(minimal, "grep", "glob"), []string{"grep x"}, ""},
		{"default preset", "default", minimal, []string{"grep x"}, ""},
		{"codemode-only", "codemode-only", []string{"codemode"}, []string{"grep x"}, ""},
		{"no preset", "", minimal, []string{"grep x"}, ""},
		{"no search", "minimal", minimal, []string{"ls", "echo grep"}, ""},
		{"nothing denied", "minimal", minimal, nil, ""},
	} {
		var b strings.Builder
		searchHint(&b, c.preset, c.active, c.denied, i18n.En)
		got := b.String()
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: unexpected hint %q", c.name, got)
		case c.want != "" && (!strings.Contains(got, c.want) || !strings.HasPrefix(got, "ama: ") || strings.Count(got, "\n") != 1):
			t.Errorf("%s: hint %q, want one ama: line containing %q", c.name, got, c.want)
		}
	}
	var zh strings.Builder
	searchHint(&zh, "minimal", minimal, []string{"rg x"}, i18n.Zh)
	if !strings.Contains(zh.String(), "工具预设 minimal") {
		t.Errorf("zh hint %q", zh.String())
	}
}

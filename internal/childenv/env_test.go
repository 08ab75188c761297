package childenv_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/internal/childenv"
)

func TestRemoved(t *testing.T) {
	agent := childenv.Policy{ModelClient: true}
	hide := childenv.Policy{Hide: []string{"MY_LLM_TOKEN"}}
	for _, c := range []struct {
		name, val string
		p         childenv.Policy
		want      bool
	}{
		{"OPENAI_API_KEY", "sk", childenv.Policy{}, true},
		{"ANTHROPIC_API_KEY", "a", childenv.Policy{}, true},
		{"ANTHROPIC_AUTH_TOKEN", "a", childenv.Policy{}, true},
		{"AMA_API_KEY_WORK", "w", childenv.Policy{}, true},
		{"MY_LLM_TOKEN", "x", hide, true},
		{"MY_LLM_TOKEN", "x", childenv.Policy{}, false},
		{"OPENAI_BASE_URL", "https://h/v1", childenv.Policy{}, false},
		{"VLLM_BASE_URL", "https://u:p@h/v1", childenv.Policy{}, true},
		{"X_BASE_URL", "https://h/v1?key=s", childenv.Policy{}, true},
		{"X_BASE_URL", "https://h/v1#s", childenv.Policy{}, true},
		{"STRIPE_API_KEY", "s", childenv.Policy{}, false},
		{"AMA_FAKE_SCRIPT", "f", childenv.Policy{}, false},
		{"ARMADRA_TOKEN", "t", childenv.Policy{}, false},
		{"PATH", "/bin", childenv.Policy{}, false},
		// An external agent: ama's endpoint and settings go too.
		{"STRIPE_API_KEY", "s", agent, true},
		{"OPENAI_BASE_URL", "https://h/v1", agent, true},
		{"AMA_FAKE_SCRIPT", "f", agent, true},
		{"ARMADRA_TOKEN", "t", agent, true},
		{"ARMADRA_ASKPASS_SOCKET", "s", agent, false},
		{"PATH", "/bin", agent, false},
		{"HOME", "/h", agent, false},
	} {
		if got := childenv.Removed(c.name, c.val, c.p); got != c.want {
			t.Errorf("Removed(%s=%s, %+v) = %v, want %v", c.name, c.val, c.p, got, c.want)
		}
	}
}

func TestScrub(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/h", "OPENAI_API_KEY=sk-1", "ANTHROPIC_API_KEY=a", "AMA_API_KEY_MINE=m",
		"OPENROUTER_API_KEY=o", "MY_KEY=x", "OPENAI_BASE_URL=https://h/v1", "VLLM_BASE_URL=https://u:p@h/v1",
		"X_BASE_URL=https://h/v1?key=secret", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me",
		"KEEP_API_TOKEN=t", "GROQ_API_KEY=g"}
	got := childenv.Scrub(base, childenv.Policy{Hide: []string{"MY_KEY"}, Pass: []string{"GROQ_API_KEY"}}, []string{"EXTRA=1"})
	for _, gone := range []string{"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "AMA_API_KEY_MINE=", "OPENROUTER_API_KEY=",
		"MY_KEY=", "VLLM_BASE_URL=", "X_BASE_URL="} {
		for _, kv := range got {
			if strings.HasPrefix(kv, gone) {
				t.Errorf("%s still set", kv)
			}
		}
	}
	for _, kept := range []string{"PATH=/bin", "HOME=/h", "OPENAI_BASE_URL=https://h/v1", "KEEP_API_TOKEN=t", "GROQ_API_KEY=g",
		"GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me", "GIT_CONFIG_KEY_1=safe.bareRepository",
		"GIT_CONFIG_VALUE_1=explicit", "GIT_CONFIG_KEY_2=core.fsmonitor", "GIT_CONFIG_VALUE_2=false", "GIT_CONFIG_COUNT=4", "EXTRA=1"} {
		if !slices.Contains(got, kept) {
			t.Errorf("%s missing from %v", kept, got)
		}
	}
	if n := strings.Count(strings.Join(got, "\n"), "GIT_CONFIG_COUNT="); n != 1 {
		t.Errorf("GIT_CONFIG_COUNT set %d times", n)
	}
}

// ama-rpc's own git keeps only the configuration-location GIT_* variables
// and gets the hook and transport settings after the caller's.
func TestGitEnv(t *testing.T) {
	base := []string{"PATH=/bin", "OPENAI_API_KEY=sk", "GIT_DIR=/elsewhere", "GIT_WORK_TREE=/w", "GIT_EXTERNAL_DIFF=x",
		"GIT_CONFIG_PARAMETERS='core.hooksPath'='/h'", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath",
		"GIT_CONFIG_VALUE_0=/evil", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES=/c"}
	got := childenv.GitEnv(base)
	for _, gone := range []string{"OPENAI_API_KEY=", "GIT_DIR=", "GIT_WORK_TREE=", "GIT_EXTERNAL_DIFF=", "GIT_CONFIG_PARAMETERS=",
		"GIT_CONFIG_VALUE_0=/evil"} {
		for _, kv := range got {
			if strings.HasPrefix(kv, gone) {
				t.Errorf("%s still set", kv)
			}
		}
	}
	for _, kept := range []string{"PATH=/bin", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES=/c",
		"GIT_CONFIG_KEY_0=safe.bareRepository", "GIT_CONFIG_KEY_3=core.hooksPath", "GIT_CONFIG_VALUE_3=/dev/null",
		"GIT_CONFIG_COUNT=8", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0"} {
		if !slices.Contains(got, kept) {
			t.Errorf("%s missing from %v", kept, got)
		}
	}
}

// Whatever the base, a credential leaves Scrub only when passed through,
// and the forced git settings are always the last pairs.
func FuzzScrub(f *testing.F) {
	f.Add("OPENAI_API_KEY", "sk", "GIT_CONFIG_COUNT", "7", false)
	f.Add("X_BASE_URL", "https://u@h", "AMA_API_KEY_X", "k", true)
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string, agent bool) {
		if strings.Contains(n1, "=") || strings.Contains(n2, "=") {
			return
		}
		p := childenv.Policy{ModelClient: agent, Pass: []string{"KEEP"}}
		got := childenv.Scrub([]string{n1 + "=" + v1, n2 + "=" + v2, "KEEP=1"}, p, nil)
		for _, kv := range got {
			name, val, _ := strings.Cut(kv, "=")
			if name != "KEEP" && !strings.HasPrefix(name, "GIT_CONFIG_") && childenv.Removed(name, val, p) {
				t.Fatalf("%q kept", kv)
			}
		}
		if !slices.Contains(got, "KEEP=1") || !strings.HasPrefix(got[len(got)-1], "GIT_CONFIG_COUNT=") {
			t.Fatalf("%v", got)
		}
	})
}

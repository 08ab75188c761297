package childenv

import (
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
)

// credential are the provider credentials ama-rpc itself reads (the
// built-in presets' key variables) and those of other well-known model
// providers. AMA_API_KEY_* and Policy.Hide are credentials too; *_BASE_URL
// values that carry a secret (user info, a query or a fragment) are
// removed as well.
var credential = map[string]bool{
	"OPENAI_API_KEY": true, "OPENROUTER_API_KEY": true, "DEEPSEEK_API_KEY": true, "GROQ_API_KEY": true,
	"TOGETHER_API_KEY": true, "VLLM_API_KEY": true, "ANTHROPIC_API_KEY": true, "ANTHROPIC_AUTH_TOKEN": true,
	"GEMINI_API_KEY": true, "GOOGLE_API_KEY": true, "MISTRAL_API_KEY": true, "XAI_API_KEY": true,
	"CODEX_API_KEY": true, "AZURE_OPENAI_API_KEY": true, "FIREWORKS_API_KEY": true, "CEREBRAS_API_KEY": true,
	"OLLAMA_API_KEY": true, "LMSTUDIO_API_KEY": true, "MOONSHOT_API_KEY": true, "DASHSCOPE_API_KEY": true,
	"ZAI_API_KEY": true, "PERPLEXITY_API_KEY": true, "COHERE_API_KEY": true,
}

// gitSafe is forced on every git a child runs, through
// GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n (command-line
// scope: above repository, user and system configuration, and
// "protected", so safe.bareRepository is honoured). A repository the
// agent can create without asking is bare-shaped (writing into a .git
// directory asks or is denied), and safe.bareRepository=explicit makes git
// refuse to discover it; core.fsmonitor=false and core.pager=cat are kept
// for git versions before 2.38, which lack safe.bareRepository.
var gitSafe = [][2]string{
	{"safe.bareRepository", "explicit"},
	{"core.fsmonitor", "false"},
	{"core.pager", "cat"},
}

// Policy adjusts Scrub for one kind of child.
type Policy struct {
	// Hide names more credential variables (a provider's configured
	// apiKeyEnv, which need not look like a key).
	Hide []string
	// Pass names variables kept although they would be removed
	// (tools.env.passthrough, agents.<id>.env.passthrough).
	Pass []string
	// ModelClient: the child is another model client (an external agent
	// CLI), which must use its own login and endpoint, not ama's: every
	// *_API_KEY and *_BASE_URL, ama's own settings (AMA_*) and the
	// canvas's (ARMADRA_*, except ARMADRA_ASKPASS_*) go as well.
	ModelClient bool
}

// Environ is Scrub of this process's environment, plus extra.
func Environ(p Policy, extra ...string) []string { return Scrub(os.Environ(), p, extra) }

// Scrub builds a child's complete environment from base (KEY=VALUE
// entries): base without the credentials (and what p.ModelClient removes),
// except the names in p.Pass, plus the forced git settings, plus extra.
// The caller's GIT_CONFIG_* pairs are kept; ours follow and win.
func Scrub(base []string, p Policy, extra []string) []string {
	out, count := scrub(base, p, len(extra))
	out = appendGitConfig(out, count, gitSafe)
	return append(out, extra...)
}

// scrub is Scrub without the git settings: the kept entries, and the
// count of the caller's GIT_CONFIG_* pairs (GIT_CONFIG_COUNT is left out).
func scrub(base []string, p Policy, room int) ([]string, int) {
	out := make([]string, 0, len(base)+2*(len(gitSafe)+len(ownGit))+4+room)
	count := 0
	for _, kv := range base {
		name, val, _ := strings.Cut(kv, "=")
		if name == "GIT_CONFIG_COUNT" {
			if n, err := strconv.Atoi(val); err == nil && n > 0 {
				count = n
			}
			continue
		}
		if !slices.Contains(p.Pass, name) && Removed(name, val, p) {
			continue
		}
		out = append(out, kv)
	}
	return out, count
}

// Removed reports whether Scrub removes the variable name=val under p
// (before p.Pass is applied).
func Removed(name, val string, p Policy) bool {
	switch {
	case credential[name], strings.HasPrefix(name, "AMA_API_KEY_"), slices.Contains(p.Hide, name):
		return true
	case strings.HasSuffix(name, "_BASE_URL"):
		return p.ModelClient || urlHasSecret(val)
	case p.ModelClient:
		return strings.HasSuffix(name, "_API_KEY") || strings.HasPrefix(name, "AMA_") ||
			strings.HasPrefix(name, "ARMADRA_") && !strings.HasPrefix(name, "ARMADRA_ASKPASS_")
	}
	return false
}

// appendGitConfig appends the GIT_CONFIG_KEY_n/VALUE_n pairs of kvs after
// the count pairs already in env, and the new GIT_CONFIG_COUNT.
func appendGitConfig(env []string, count int, kvs [][2]string) []string {
	for i, kv := range kvs {
		n := strconv.Itoa(count + i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(count+len(kvs)))
}

// urlHasSecret reports a URL with user info, a query string or a fragment
// (where keys of some endpoints live).
func urlHasSecret(v string) bool {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		return strings.ContainsAny(v, "@?#")
	}
	return u.User != nil || u.RawQuery != "" || u.Fragment != ""
}

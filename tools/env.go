package tools

import (
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ReadTracker remembers which files were read in a session.
type ReadTracker struct {
	mu    sync.Mutex
	paths map[string]bool
}

// NewReadTracker returns an empty tracker.
func NewReadTracker() *ReadTracker { return &ReadTracker{paths: map[string]bool{}} }

// Mark records that the absolute path was read (or written by the agent).
func (r *ReadTracker) Mark(path string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.paths[path] = true
	r.mu.Unlock()
}

// Has reports whether the absolute path was read.
func (r *ReadTracker) Has(path string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paths[path]
}

// Paths returns the recorded paths, sorted.
func (r *ReadTracker) Paths() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.paths))
	for p := range r.paths {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// The environment of the commands the bash tool runs (foreground and
// background): the server's environment without the model's credentials,
// plus git settings that keep configuration written into the project from
// running programs, plus Env.ExtraEnv.

// credentialVars are the provider credentials ama-rpc itself reads (the
// built-in presets' key variables) and those of other well-known model
// providers. AMA_API_KEY_* and configured apiKeyEnv names are added by
// CommandEnviron; *_BASE_URL values that carry a secret (user info or a
// query string) are removed too.
var credentialVars = map[string]bool{
	"OPENAI_API_KEY": true, "OPENROUTER_API_KEY": true, "DEEPSEEK_API_KEY": true, "GROQ_API_KEY": true,
	"TOGETHER_API_KEY": true, "VLLM_API_KEY": true, "ANTHROPIC_API_KEY": true, "ANTHROPIC_AUTH_TOKEN": true,
	"GEMINI_API_KEY": true, "GOOGLE_API_KEY": true, "MISTRAL_API_KEY": true, "XAI_API_KEY": true,
	"CODEX_API_KEY": true, "AZURE_OPENAI_API_KEY": true, "FIREWORKS_API_KEY": true, "CEREBRAS_API_KEY": true,
	"OLLAMA_API_KEY": true, "LMSTUDIO_API_KEY": true, "MOONSHOT_API_KEY": true, "DASHSCOPE_API_KEY": true,
	"ZAI_API_KEY": true, "PERPLEXITY_API_KEY": true, "COHERE_API_KEY": true,
}

// gitSafeConfig is forced on every git the bash tool runs, through
// GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n (command-line scope:
// above repository, user and system configuration, and "protected", so
// safe.bareRepository is honoured). A repository the agent can create
// without asking is bare-shaped (HEAD, objects/, refs/, config: writing into
// a .git directory asks or is denied), and safe.bareRepository=explicit
// makes git refuse to discover it; core.fsmonitor=false and core.pager=cat
// are kept for git versions before 2.38, which lack safe.bareRepository.
var gitSafeConfig = [][2]string{
	{"safe.bareRepository", "explicit"},
	{"core.fsmonitor", "false"},
	{"core.pager", "cat"},
}

// EnvPolicy adjusts which variables of the server's environment commands
// see.
type EnvPolicy struct {
	// Hide names more credential variables (a provider's configured
	// apiKeyEnv).
	Hide []string
	// Pass names variables kept although they would be removed
	// (configuration tools.env.passthrough).
	Pass []string
}

// CommandEnviron is the complete environment of a command: os.Environ()
// filtered by Env.EnvPolicy, the git settings and Env.ExtraEnv.
func (e *Env) CommandEnviron() []string {
	var pol EnvPolicy
	var extra []string
	if e != nil {
		pol, extra = e.EnvPolicy, e.ExtraEnv
	}
	return CommandEnv(os.Environ(), pol, extra)
}

// CommandEnv builds a command environment from base (KEY=VALUE entries).
func CommandEnv(base []string, pol EnvPolicy, extra []string) []string {
	out := make([]string, 0, len(base)+2*len(gitSafeConfig)+1+len(extra))
	count := 0
	for _, kv := range base {
		name, val, _ := strings.Cut(kv, "=")
		if slices.Contains(pol.Pass, name) {
			out = append(out, kv)
			continue
		}
		if isCredentialVar(name, val) || slices.Contains(pol.Hide, name) {
			continue
		}
		switch {
		case name == "GIT_CONFIG_COUNT":
			if n, err := strconv.Atoi(val); err == nil && n > 0 {
				count = n // keep the caller's pairs; ours follow and win
			}
			continue
		}
		out = append(out, kv)
	}
	for i, kv := range gitSafeConfig {
		n := strconv.Itoa(count + i)
		out = append(out, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	out = append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(count+len(gitSafeConfig)))
	return append(out, extra...)
}

// isCredentialVar reports the model's credentials.
func isCredentialVar(name, val string) bool {
	switch {
	case credentialVars[name], strings.HasPrefix(name, "AMA_API_KEY_"):
		return true
	case strings.HasSuffix(name, "_BASE_URL"):
		return urlHasSecret(val)
	}
	return false
}

// urlHasSecret reports a URL with user info or a query string (where keys
// of some endpoints live).
func urlHasSecret(v string) bool {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		return strings.ContainsAny(v, "@?")
	}
	return u.User != nil || u.RawQuery != "" || u.Fragment != ""
}

package secrets

import (
	"slices"
	"testing"
)

func TestReachesSecret(t *testing.T) {
	const home = "/home/u"
	private := PrivateDirs("/data/ama", "/srv/sessions")
	for _, c := range []struct {
		root string
		want bool
	}{
		{"/", true},
		{"/proc", true},
		{"/proc/123", true},
		{"/proc/self/task", true},
		{"/sys", true},
		{"/sys/kernel", true},
		{"/home", true},
		{"/home/u", true},
		{"/home/other", true},
		{"/Users", true},
		{"/Users/bob", true},
		{"/root", true},
		{"/home/u/.config", true}, // holds .config/gh/hosts.yml, .config/ama
		{"/home/u/.local", true},  // holds ama's default sessions
		{"/home/u/.local/share", true},
		{"/home/u/.cargo", true},
		{"/home/u/.terraform.d", true},
		{"/home/u/.codex", true}, // holds .codex/auth.json
		{"/home/u/.cache", true}, // holds .cache/huggingface/token
		{"/home/u/.codex/sessions", false},
		{"/home/u/.cache/go-build", false},
		{"/data", true}, // holds the configured data dir's sessions
		{"/data/ama", true},
		{"/srv", true},
		{"/home/u/proj", false},
		{"/home/u/proj/src", false},
		{"/home/u/.local/share/ama/tool-output/s1", false},
		{"/tmp", false},
		{"/tmp/x", false},
		{"/usr/share/doc", false},
		{"/data/ama/tool-output", false},
		{"", false},
		{"relative", false},
	} {
		got := ReachesSecret(c.root, home, private...)
		if (got != "") != c.want {
			t.Errorf("ReachesSecret(%q) = %q, want reach=%v", c.root, got, c.want)
		}
	}
	if r := ReachesSecret("/home/u", ""); r == "" {
		t.Errorf("without HOME a home directory still reaches other users' secrets")
	}
}

func TestPrivateReason(t *testing.T) {
	private := PrivateDirs("/data/ama", "/srv/sessions")
	for p, want := range map[string]bool{
		"/data/ama/sessions/x.jsonl": true,
		"/data/ama/file-history/a/b": true,
		"/data/ama/auth.json":        true,
		"/srv/sessions/p/s.jsonl":    true,
		"/data/ama/tool-output/s1/x": false,
		"/data/ama":                  false,
		"/srv":                       false,
	} {
		if got := PrivateReason(p, private); (got != "") != want {
			t.Errorf("PrivateReason(%q) = %q, want %v", p, got, want)
		}
	}
	if got := PrivateDirs("", "rel"); len(got) != 0 {
		t.Errorf("relative and empty dirs are skipped, got %v", got)
	}
}

func TestReasonKnowsTheStoresOfTheIssue(t *testing.T) {
	for _, p := range []string{
		"/home/u/.npmrc", "/home/u/.config/gh/hosts.yml", "/home/u/.pypirc", "/home/u/.cargo/credentials.toml",
		"/home/u/.vault-token", "/home/u/.terraform.d/credentials.tfrc.json", "/home/u/.azure/accessTokens.json",
		"/home/u/.bash_history", "/home/u/.zsh_history", "/home/u/.ssh/id_rsa", "/home/u/.aws/credentials",
		"/home/u/.netrc", "/home/u/.kube/config", "/home/u/.git-credentials", "/home/u/.docker/config.json",
		"/proc/1/environ", "/proc/1/cmdline", "/home/u/.local/share/ama/sessions/p/s.jsonl",
		"/home/u/.local/share/ama/file-history/x",
		// Other agents' provider keys and tokens, cloud and database tools.
		"/home/u/.codex/auth.json", "/home/u/.claude/.credentials.json", "/home/u/.claude.json",
		"/home/u/.gemini/oauth_creds.json", "/home/u/.qwen/oauth_creds.json", "/home/u/.local/share/opencode/auth.json",
		"/home/u/.config/github-copilot/apps.json", "/home/u/.cache/huggingface/token", "/home/u/.kaggle/kaggle.json",
		"/home/u/.config/rclone/rclone.conf", "/home/u/.s3cfg", "/home/u/.boto", "/home/u/.my.cnf", "/home/u/.oci/config",
		"/home/u/.config/doctl/config.yaml", "/home/u/.fly/config.yml", "/home/u/.pulumi/credentials.json",
		"/home/u/.config/sops/age/keys.txt", "/home/u/.gem/credentials", "/home/u/.mozilla/firefox/p/logins.json",
		"/home/u/.config/google-chrome/Default/Cookies", "/home/u/.config/BraveSoftware/x",
	} {
		if Reason(p) == "" {
			t.Errorf("Reason(%q) is empty", p)
		}
	}
	for _, p := range []string{"/home/u/proj/main.go", "/home/u/.local/share/ama/tool-output/s/x.log", "/proc/1/status"} {
		if r := Reason(p); r != "" {
			t.Errorf("Reason(%q) = %q, want none", p, r)
		}
	}
}

// TestAgentEnvFiles: the dotenv files external agent CLIs load at start are
// among the protected agent settings (the sandbox keeps them read-only)
// and are secret paths (auto asks before writing them), and templates,
// which none of the CLIs loads, are neither.
func TestAgentEnvFiles(t *testing.T) {
	for _, f := range []string{".env", ".env.local", ".env.development", ".env.development.local", ".env.production", ".env.test.local"} {
		if !slices.Contains(AgentEnvFiles, f) || !slices.Contains(AgentConfigPaths, f) {
			t.Errorf("%s is not a protected agent env file", f)
		}
	}
	for _, f := range AgentEnvFiles {
		if !IsEnvFile(f) || Reason("/p/"+f) == "" {
			t.Errorf("%s is protected in the sandbox but not a secret path", f)
		}
	}
	for _, f := range []string{".env.example", ".env.sample", ".env.template", ".env.dist", ".envrc"} {
		if slices.Contains(AgentConfigPaths, f) {
			t.Errorf("%s is protected, but no agent CLI loads it", f)
		}
	}
}

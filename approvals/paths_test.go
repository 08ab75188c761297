package approvals_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/approvals"
)

// Secret paths (5.1) for file tools: auto mode asks for reads and writes.
func TestSecretPaths(t *testing.T) {
	secret := []string{
		".env", ".env.local", ".env.production", "prod.env", "config/staging.env", ".ENV", ".env.example.bak",
		"id_rsa", "keys/id_dsa", "id_ecdsa", "id_ed25519", "id_ed25519_sk", "id_ecdsa_sk", "cert.pem", "tls.KEY",
		"store.p12", "x.pfx", "a.jks", "b.keystore", "putty.ppk", ".netrc", "~/.pgpass", ".git-credentials",
		"~/.ssh/config", "~/.ssh/known_hosts", "~/.gnupg/pubring.kbx", "~/.aws/credentials", "/root/.aws/config",
		"~/.kube/config", "~/.docker/config.json", "~/.config/gcloud/credentials.db", "~/.config/ama/auth.json",
		"/etc/ama/auth.json", ".ama/auth.json", "$HOME/.env", "${HOME}/.ssh/id_rsa", "file://" + cwd + "/.env",
		"~/.config/ama/config.json", "~/.npmrc", "~/.config/gh/hosts.yml", "~/.pypirc", "~/.cargo/credentials.toml",
		"~/.vault-token", "~/.terraform.d/credentials.tfrc.json", "~/.azure/accessTokens.json", "~/.bash_history",
		"~/.zsh_history", "/proc/1/environ", "/proc/self/cmdline",
	}
	fine := []string{
		".env.example", ".env.sample", ".env.template", ".env.dist", ".ENV.EXAMPLE", ".envrc", "id_rsa.pub",
		"keys/id_ed25519.pub", "environment.ts", "src/env.ts", "auth.json", "config/auth.json", "key.txt",
		"pem.md", "src/keys.go", "kube/config", "docker/config.json", "config/ama/config.json", "azure/main.tf",
	}
	p := noBuiltins(t, approvals.ModeAuto, "read", "write")
	for _, path := range secret {
		t.Run("secret/"+path, func(t *testing.T) {
			for _, c := range []approvals.Call{
				pathCall("read", approvals.ClassRead, path), pathCall("write", approvals.ClassWrite, path),
			} {
				v := approvals.Decide(c, p, nil)
				if c.Tool == "write" && (strings.Contains(path, ".config/ama/") || strings.HasPrefix(path, ".ama/")) {
					// ama's own safety files: a write is denied outright.
					if v.Decision != approvals.Deny || v.Layer != "safety" {
						t.Fatalf("%s: %s/%s (%s)", c.Tool, v.Decision, v.Layer, v.Reason)
					}
					continue
				}
				if v.Decision != approvals.Ask || v.Layer != "auto-rule" {
					t.Fatalf("%s: %s/%s (%s)", c.Tool, v.Decision, v.Layer, v.Reason)
				}
			}
		})
	}
	for _, path := range fine {
		t.Run("fine/"+path, func(t *testing.T) {
			if v := approvals.Decide(pathCall("read", approvals.ClassRead, path), p, nil); v.Decision != approvals.Allow {
				t.Fatalf("read: %s (%s)", v.Decision, v.Reason)
			}
		})
	}
}

// Protected writes (5.2) in auto mode.
func TestProtectedWrites(t *testing.T) {
	cases := map[string]bool{ // path → asks (or, for ama's safety files, denies)
		"src/a.ts": false, "README.md": false, ".amarc": false, "docs/.ama-notes": false, cwd: false,
		"/dev/null": false, "AGENTS.md": false,
		".git/config": true, ".git/hooks/pre-commit": true, "sub/.git/hooks/x": true, ".ama/hooks.json": true,
		".ama": true, "/tmp/x.txt": true, "../x": true, "/home/u/proj-evil/x": true, "~/x": true,
		"src/../../x": true, "/etc/hosts": true, ".env": true, "//home/u/proj/../x": true,
		".claude/settings.json": true, ".claude/settings.local.json": true, ".mcp.json": true,
		".gemini/settings.json": true, ".codex/config.toml": true, ".opencode/plugins/x.js": true,
		"opencode.json": true, ".qwen/settings.json": true, ".claude": true,
		".claudeignore": false, "docs/.claude-notes.md": false, "CLAUDE.md": false,
	}
	p := noBuiltins(t, approvals.ModeAuto)
	for path, asks := range cases {
		t.Run(path, func(t *testing.T) {
			v := approvals.Decide(pathCall("write", approvals.ClassWrite, path), p, nil)
			if asks != (v.Decision != approvals.Allow) {
				t.Fatalf("got %s (%s)", v.Decision, v.Reason)
			}
			if !asks && v.Layer != "static" {
				t.Fatalf("layer %s", v.Layer)
			}
		})
	}
	// Host write tools without a path go to the classifier.
	v := approvals.Decide(toolCall("canvas_send", approvals.ClassWrite, map[string]any{"text": "x"}), p, nil)
	if !v.Classify {
		t.Fatalf("pathless write: %+v", v)
	}
	// Non-bash execute tools go to the classifier.
	if v := approvals.Decide(toolCall("task", approvals.ClassExecute, map[string]any{"prompt": "x"}), p, nil); !v.Classify {
		t.Fatalf("task: %+v", v)
	}
	// A host tool with a path is judged like a file tool.
	if v := approvals.Decide(pathCall("canvas_save", approvals.ClassWrite, "/tmp/x"), p, nil); v.Decision != approvals.Ask || v.Classify {
		t.Fatalf("host path tool: %+v", v)
	}
}

// Built-in deny rules (5.3) apply to file tools in every mode, not to bash.
func TestBuiltinDeny(t *testing.T) {
	denied := []approvals.Call{
		pathCall("write", approvals.ClassWrite, ".git/config"),
		pathCall("edit", approvals.ClassWrite, "sub/.git/hooks/pre-commit"),
		pathCall("read", approvals.ClassRead, "~/.ssh/id_rsa"),
		pathCall("read", approvals.ClassRead, "/home/other/.ssh/config"),
		pathCall("write", approvals.ClassWrite, "~/.ssh/authorized_keys"),
		pathCall("edit", approvals.ClassWrite, "$HOME/.ssh/config"),
		pathCall("Read", approvals.ClassRead, "~/.SSH/id_rsa"),
		pathCall("write", approvals.ClassWrite, cwd+"/./.git//config"),
	}
	allowed := []approvals.Call{
		pathCall("read", approvals.ClassRead, ".git/config"),
		pathCall("read", approvals.ClassRead, "src/.gitignore"),
		pathCall("write", approvals.ClassWrite, ".gitignore"),
		pathCall("write", approvals.ClassWrite, ".github/workflows/ci.yml"),
	}
	for _, mode := range approvals.Modes {
		p := policy(t, mode, []string{"read", "write", "edit"}, nil)
		for _, c := range denied {
			if v := approvals.Decide(c, p, nil); v.Decision != approvals.Deny || v.Layer != "deny-rule" {
				t.Errorf("%s %s %s: %s/%s", mode, c.Tool, c.Input, v.Decision, v.Layer)
			}
		}
		for _, c := range allowed {
			if v := approvals.Decide(c, p, nil); v.Layer == "deny-rule" {
				t.Errorf("%s %s %s: denied (%s)", mode, c.Tool, c.Input, v.Reason)
			}
		}
		// Not applied to bash (the reference behaviour).
		if v := approvals.Decide(bashCall("cat ~/.ssh/id_rsa"), p, nil); v.Layer == "deny-rule" {
			t.Errorf("%s: built-in deny applied to bash", mode)
		}
	}
	// Disabling them.
	for _, disable := range [][]string{{"*"}, {"read(**/.ssh/**)"}} {
		p, _, err := approvals.BuildPolicy(approvals.Layer{Mode: "full-auto", DisableBuiltinDeny: disable}, approvals.Layer{}, approvals.Layer{})
		if err != nil {
			t.Fatal(err)
		}
		if v := approvals.Decide(pathCall("read", approvals.ClassRead, "~/.ssh/id_rsa"), p, nil); v.Decision != approvals.Allow {
			t.Errorf("disable %v: %s", disable, v.Decision)
		}
	}
}

// noBuiltins builds a policy without the built-in deny rules.
func noBuiltins(t *testing.T, mode approvals.Mode, allow ...string) *approvals.Policy {
	t.Helper()
	p, _, err := approvals.BuildPolicy(approvals.Layer{Mode: string(mode), Allow: allow, DisableBuiltinDeny: []string{"*"}},
		approvals.Layer{}, approvals.Layer{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ama's files found at startup (a relocated config directory, a profile):
// no tool writes them in any mode; auto mode asks before reading those
// that can hold keys, other modes read them as usual.
func TestSafetyFilesOfTheProcess(t *testing.T) {
	for _, mode := range approvals.Modes {
		p := noBuiltins(t, mode)
		p.Safety = approvals.Safety{Dirs: []string{"/cfg/ama", "/data/ama"}, Files: []string{"/etc/prof.json"},
			Keys: []string{"/cfg/ama", "/data/ama/auth.json", "/etc/prof.json"}}
		for _, w := range []string{"/cfg/ama/hooks.json", "/data/ama/sessions/x.jsonl", "/etc/prof.json", "/data/ama"} {
			if v := approvals.Decide(pathCall("write", approvals.ClassWrite, w), p, nil); v.Decision != approvals.Deny || v.Layer != "safety" {
				t.Errorf("%s: write %s: %s/%s", mode, w, v.Decision, v.Layer)
			}
		}
		for _, r := range []string{"/cfg/ama/config.json", "/etc/prof.json"} {
			v := approvals.Decide(pathCall("read", approvals.ClassRead, r), p, nil)
			if mode == approvals.ModeAuto && (v.Decision != approvals.Ask || !strings.Contains(v.Reason, "ama")) {
				t.Errorf("auto: read %s: %s (%s)", r, v.Decision, v.Reason)
			}
		}
		// ama's own API key file is never read by a file tool, in any mode
		// (the resolved data directory's and the default one under HOME).
		for _, r := range []string{"/data/ama/auth.json", home + "/.local/share/ama/auth.json"} {
			for _, tool := range []string{"read", "grep", "ls"} {
				if v := approvals.Decide(pathCall(tool, approvals.ClassRead, r), p, nil); v.Decision != approvals.Deny || v.Layer != "safety" {
					t.Errorf("%s: %s %s: %s/%s (%s)", mode, tool, r, v.Decision, v.Layer, v.Reason)
				}
			}
		}
		if v := approvals.Decide(pathCall("read", approvals.ClassRead, cwd+"/auth.json"), p, nil); v.Layer == "safety" {
			t.Errorf("%s: a project's auth.json is not ama's key: %s (%s)", mode, v.Decision, v.Reason)
		}
		if mode == approvals.ModeAuto {
			if v := approvals.Decide(pathCall("read", approvals.ClassRead, "/data/ama/tool-output/s/bash-1.txt"), p, nil); v.Decision != approvals.Allow {
				t.Errorf("auto: read of a cut output: %s (%s)", v.Decision, v.Reason)
			}
		}
	}
}

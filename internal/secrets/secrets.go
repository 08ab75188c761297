package secrets

import (
	"path"
	"strings"
)

// HomePaths are the credential stores at fixed places under HOME (relative
// to it). Directories hide everything below them.
var HomePaths = []string{
	".ssh", ".gnupg", ".aws", ".kube", ".docker/config.json", ".config/gcloud",
	".netrc", ".pgpass", ".git-credentials", ".config/git/credentials",
	".npmrc", ".config/gh/hosts.yml", ".pypirc",
	".cargo/credentials", ".cargo/credentials.toml", ".vault-token",
	".terraform.d/credentials.tfrc.json", ".azure", ".config/hub",
	".config/op", ".password-store", ".local/share/keyrings",
	".bash_history", ".zsh_history", ".histfile", ".local/share/fish/fish_history",
	".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
	".sqlite_history", ".lesshst", ".viminfo",
	".gradle/gradle.properties", ".m2/settings.xml", ".m2/settings-security.xml",
	".config/ama",
	// The keys and tokens of the other coding agents and of cloud, database
	// and package tools (a model told to "check the setup" reads these as
	// readily as ~/.aws): Codex's auth.json holds an OpenAI key, Claude
	// Code's .credentials.json and .claude.json (primaryApiKey) an Anthropic
	// one, Gemini CLI, Qwen Code, OpenCode and Copilot keep OAuth tokens or
	// provider keys; browsers keep cookies and saved logins.
	".codex/auth.json", ".claude/.credentials.json", ".claude.json", ".gemini/oauth_creds.json",
	".gemini/mcp-oauth-tokens.json", ".qwen/oauth_creds.json", ".local/share/opencode/auth.json",
	".config/github-copilot", ".cache/huggingface/token", ".huggingface/token", ".kaggle/kaggle.json",
	".config/rclone/rclone.conf", ".s3cfg", ".boto", ".my.cnf", ".mylogin.cnf", ".oci", ".config/doctl",
	".fly/config.yml", ".config/.wrangler/config", ".wrangler/config", ".pulumi/credentials.json",
	".config/sops/age/keys.txt", ".gem/credentials", ".composer/auth.json", ".config/composer/auth.json",
	".databrickscfg", ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
	// ama's data directory at its default place: other projects' sessions
	// and checkpoints, the API key (see AmaDataPaths for a configured one).
	".local/share/ama/sessions", ".local/share/ama/file-history", ".local/share/ama/auth.json",
}

// AgentConfigPaths are the project files (relative to the project) through
// which an external agent CLI that ama-rpc starts outside the sandbox
// (agents: task with agent=claude, codex, gemini, qwen, opencode…) runs
// programs: hooks, MCP servers, plugins, and the dotenv files it loads at
// start (AgentEnvFiles). A command or a file tool that could write one
// would run code unsandboxed, or send the user's key elsewhere, at the
// next such task, so the sandbox keeps them read-only and auto modes ask
// before a write.
// Claude Code: .claude (settings.json and settings.local.json hooks,
// agents, commands) and .mcp.json; Gemini CLI: .gemini (settings.json
// mcpServers and hooks, .gemini/.env); Qwen Code (Gemini CLI's fork):
// .qwen; Codex: .codex (config.toml mcp_servers of a trusted project);
// OpenCode: .opencode (plugins loaded from .opencode/plugins) and
// opencode.json(c).
var AgentConfigPaths = append([]string{".claude", ".mcp.json", ".gemini", ".qwen", ".codex", ".opencode", "opencode.json", "opencode.jsonc"},
	AgentEnvFiles...)

// AgentEnvFiles are the dotenv files of the project directory that those
// CLIs load into their own environment at start, where a planted
// GOOGLE_GEMINI_BASE_URL, ANTHROPIC_BASE_URL or OPENAI_BASE_URL sends the
// user's key elsewhere and NODE_OPTIONS or PATH runs a program of the
// project's in every child they start:
//   - .env: Gemini CLI and Qwen Code look in the working directory for
//     .gemini/.env (.qwen/.env), then .env, then in each parent directory
//     up to / (the first found wins); Codex loaded .env of the working
//     directory or a parent for a while (dotenvy, mid-2025; today only
//     CODEX_HOME/.env); Bun loads it too (below).
//   - Bun's own list, loaded from the working directory by `bun` and by
//     programs compiled with `bun build --compile` unless built without it
//     (Claude Code's native build until it was, OpenCode run through bun):
//     .env, .env.<NODE_ENV>, .env.local (not when NODE_ENV=test) and
//     .env.<NODE_ENV>.local, where NODE_ENV is production, test or
//     otherwise development.
//
// A task's CLI runs in the project directory (or an isolation worktree
// below the read-only .ama), and these loaders look upward, never in
// subdirectories, so the project's own files are the ones that count.
// Templates (.env.example, .sample, .template, .dist) are loaded by none
// of them and stay writable; every entry is a secret path (IsEnvFile).
var AgentEnvFiles = []string{
	".env", ".env.local",
	".env.development", ".env.production", ".env.test",
	".env.development.local", ".env.production.local", ".env.test.local",
}

// AgentParentPaths are what an external agent CLI looks for in the
// directories above its working directory (the project): Gemini CLI and
// Qwen Code take the first .gemini/.env (.qwen/.env) or .env of each parent
// up to /, when the project has none; Codex's dotenvy did for .env. The
// sandbox protects them in every directory between a writable tree and the
// project it holds (a sandbox.writable "~/code" for the project
// ~/code/app), where a command could otherwise plant them.
var AgentParentPaths = []string{".env", ".gemini", ".qwen"}

// AmaDataPaths are the parts of ama's data directory (relative to it) that
// hold other sessions' conversations and file checkpoints or the API key.
// Its tool-output directory is not on the list: commands read the cut
// outputs of their own session there.
var AmaDataPaths = []string{"sessions", "file-history", "auth.json"}

// PrivateDirs are ama's own private places for a data directory and a
// sessions directory (either may be "" or relative, which is skipped):
// absolute and cleaned, for ReachesSecret and PrivateReason.
func PrivateDirs(data, sessions string) []string {
	var out []string
	add := func(p string) {
		if p == "" || p[0] != '/' {
			return
		}
		p = path.Clean(p)
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	if data != "" {
		for _, rel := range AmaDataPaths {
			add(data + "/" + rel)
		}
	}
	add(sessions)
	return out
}

// PrivateReason says why p lies in one of ama's private places (absolute,
// cleaned, from PrivateDirs), or returns "".
func PrivateReason(p string, private []string) string {
	for _, d := range private {
		if Within(p, d) {
			return "ama's private data " + d + " (other sessions, checkpoints or the API key)"
		}
	}
	return ""
}

// homeParents hold the home directories of every user.
var homeParents = [...]string{"/home", "/Users"}

// ReachesSecret says why a read that walks the tree below root (grep -r,
// rg, find, tar, the grep tool, ...) can reach secrets, or returns "": root
// is /, lies under /proc or /sys (every process's environment and command
// line), is an ancestor of a credential store under home, is a home
// directory of another user (or their parent), or is an ancestor of one
// of ama's private places. A root inside a secret is Reason's case. Lexical
// like the rest: root must be absolute and cleaned; home may be "".
func ReachesSecret(root, home string, private ...string) string {
	switch {
	case root == "" || root[0] != '/':
		return ""
	case root == "/":
		return "the whole file system (it holds credentials, /proc and /sys)"
	case Within(root, "/proc") || Within(root, "/sys"):
		return root + " (process environments and command lines hold credentials)"
	}
	if home != "" {
		home = path.Clean(home)
		switch {
		case root == home:
			return "the home directory " + root + " (it holds ~/" + HomePaths[0] + " and other credential stores)"
		case Within(home, root):
			return root + " (it holds the home directory " + home + ")"
		case Within(root, home) && home != "/":
			// root lies in HOME: it reaches a store whose relative path
			// starts with root's.
			rest := root[len(home)+1:]
			for _, rel := range HomePaths {
				if strings.HasPrefix(rel, rest) && len(rel) > len(rest) && rel[len(rest)] == '/' {
					return root + " (it holds ~/" + rel + ")"
				}
			}
		}
	}
	if root == "/root" || Within(root, "/root") && home != "/root" && !Within(root, home) {
		return "the home directory of root (" + root + ")"
	}
	for _, hp := range homeParents {
		if root == hp || path.Dir(root) == hp && (home == "" || !Within(home, root)) {
			return "home directories of other users (" + root + ")"
		}
	}
	for _, d := range private {
		if Within(d, root) && d != root {
			return root + " (it holds ama's private data " + d + ")"
		}
	}
	return ""
}

// Within reports whether p is root or lies below it (both cleaned; an
// empty path or root is never within).
func Within(p, root string) bool {
	if root == "" || p == "" {
		return false
	}
	if root == "/" {
		return p[0] == '/'
	}
	return p == root || (strings.HasPrefix(p, root) && len(p) > len(root) && p[len(root)] == '/')
}

var privateKeyNames = map[string]bool{
	"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true,
	"id_rsa_sk": true, "id_dsa_sk": true, "id_ecdsa_sk": true, "id_ed25519_sk": true,
}

var keyExtensions = []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk"}

// credentialFiles are base names that hold credentials wherever they are.
var credentialFiles = map[string]bool{
	".netrc": true, ".pgpass": true, ".git-credentials": true, ".npmrc": true,
	".pypirc": true, ".vault-token": true, "credentials.tfrc.json": true,
	".bash_history": true, ".zsh_history": true, ".histfile": true, "fish_history": true,
	".python_history": true, ".node_repl_history": true, ".psql_history": true,
	".mysql_history": true, ".sqlite_history": true,
}

// credentialDirs are directory names whose whole content is secret.
var credentialDirs = [...]string{".ssh", ".gnupg", ".aws", ".azure", ".password-store"}

// IsEnvFile reports dotenv-style files (lower-cased base name): .env,
// .env.<anything> and *.env, except templates ending in .example, .sample,
// .template or .dist.
func IsEnvFile(base string) bool {
	if base != ".env" && !strings.HasPrefix(base, ".env.") && !strings.HasSuffix(base, ".env") {
		return false
	}
	for _, t := range [...]string{".example", ".sample", ".template", ".dist"} {
		if strings.HasSuffix(base, t) {
			return false
		}
	}
	return true
}

// Reason says why an absolute, cleaned path holds secrets, or returns "".
// It judges the path by its own components (it needs no HOME): key and
// credential file names, credential directories, the known credential
// stores' relative paths, /proc/*/environ and ama's auth.json.
func Reason(p string) string {
	if p == "" {
		return ""
	}
	base := strings.ToLower(path.Base(p))
	switch {
	case IsEnvFile(base):
		return "secret environment file " + path.Base(p)
	case privateKeyNames[base]:
		return "private key " + path.Base(p)
	case credentialFiles[base]:
		return "credentials file " + path.Base(p)
	}
	for _, ext := range keyExtensions {
		if strings.HasSuffix(base, ext) {
			return "key or certificate store " + path.Base(p)
		}
	}
	for _, dir := range credentialDirs {
		if HasComponent(p, dir) {
			return "credentials directory " + dir
		}
	}
	lp := strings.ToLower(p)
	for _, rel := range HomePaths {
		// The stores at fixed places are recognised by their last
		// components wherever HOME is (a HOME of a test, another user's).
		rel = strings.ToLower(rel)
		if strings.HasSuffix(lp, "/"+rel) || strings.Contains(lp+"/", "/"+rel+"/") {
			return "credentials store " + rel
		}
	}
	if strings.HasPrefix(p, "/proc/") && (base == "environ" || base == "cmdline") {
		return "process environment " + p + " (holds credentials)"
	}
	if strings.HasPrefix(p, "/proc/") && (base == "mem" || HasComponent(p, "fd") || HasComponent(p, "map_files")) {
		return "another process's memory or open files " + p
	}
	if base == "auth.json" {
		if parent := strings.ToLower(path.Base(path.Dir(p))); parent == "ama" || parent == ".ama" {
			return "ama API key file (auth.json)"
		}
	}
	return ""
}

// GlobReason judges a path that still contains glob characters: it counts
// as secret only when its last component starts like a dotenv file or an
// ssh key, ends in a key extension, or it reaches into a credentials
// directory.
func GlobReason(word string) string {
	lw := strings.ToLower(word)
	last := lw[strings.LastIndexByte(lw, '/')+1:]
	switch {
	case strings.HasPrefix(last, ".env"):
		return "glob over secret environment files (" + word + ")"
	case strings.HasPrefix(last, "id_"):
		return "glob over private keys (" + word + ")"
	}
	for _, ext := range keyExtensions {
		if strings.HasSuffix(last, ext) {
			return "glob over key files (" + word + ")"
		}
	}
	for _, dir := range credentialDirs {
		if strings.HasPrefix(lw, dir+"/") || strings.Contains(lw, "/"+dir+"/") {
			return "glob inside a credentials directory (" + word + ")"
		}
	}
	return ""
}

// HasComponent reports whether one of the slash-separated components of p
// equals name (ignoring case).
func HasComponent(p, name string) bool {
	for p != "" {
		var c string
		c, p, _ = strings.Cut(p, "/")
		if strings.EqualFold(c, name) {
			return true
		}
	}
	return false
}

// GlobMatchReason says why the absolute, cleaned glob pattern pat can name
// a credential store under home (HomePaths) or one of ama's private places,
// or something inside one, or returns "". Components are matched the way
// bash matches them, ignoring case: *, ? and [...] do not match a leading
// dot unless dotglob (shopt -s dotglob, GLOBIGNORE) is on, so ~/.s*/* and
// ~/.*/credentials reach ~/.ssh and ~/.aws while ~/*/* does not. A pattern
// with fewer components names a directory above the store, which is the
// business of ReachesSecret (a walk) and not a read of its own. A pattern
// path.Match cannot parse counts as matching.
func GlobMatchReason(pat, home string, private []string, dotglob bool) string {
	if pat == "" || pat[0] != '/' {
		return ""
	}
	pc := strings.Split(strings.ToLower(pat), "/")
	if home != "" && home != "/" {
		home = path.Clean(home)
		// The home part is the same for every store: matched once.
		if n, ok := globNames(pc, 0, strings.ToLower(home[1:]), dotglob); ok {
			for _, rel := range HomePaths {
				if _, ok := globNames(pc, n, strings.ToLower(rel), dotglob); ok {
					return "glob over ~/" + rel + " (" + pat + ")"
				}
			}
		}
	}
	for _, d := range private {
		if _, ok := globNames(pc, 0, strings.ToLower(d[1:]), dotglob); ok && d != "/" {
			return "glob over ama's private data " + d + " (" + pat + ")"
		}
	}
	return ""
}

// globNames matches the components of target (relative, lower-case) with
// the pattern components pc from index k+1 on (pc[0] is the empty one
// before the leading slash): it reports whether pc names target or a path
// below it, and the index of pc's component matched last.
func globNames(pc []string, k int, target string, dotglob bool) (int, bool) {
	for target != "" {
		var t string
		t, target, _ = strings.Cut(target, "/")
		k++
		if k >= len(pc) {
			return k, false // the pattern names a directory above target
		}
		p := pc[k]
		if strings.HasPrefix(t, ".") && !strings.HasPrefix(p, ".") && !dotglob {
			return k, false
		}
		if ok, err := path.Match(p, t); !ok && err == nil {
			return k, false
		}
	}
	return k, true
}

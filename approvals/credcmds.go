package approvals

import (
	"slices"
	"strings"
)

// Commands whose output is a credential although they name no secret path
// (gh auth token, git credential fill, gcloud auth print-access-token, ...):
// the program fetches the secret from its own store, keyring or server.
// Auto mode's rule tier treats them like a read of a secret path (asks,
// whatever the allow rules say; unattended: refused), so they are off the
// read-only list too (plan and allowlist refuse them, plan.bash "ask"
// asks). They are judged on the normalised segment, so wrappers (env,
// command, sudo), paths (/usr/bin/gh) and nesting (sh -c, xargs) are seen
// through by the shell analysis.

// credVerbs maps a program to the operand sequences that print a secret.
// A sequence matches where it appears contiguously among the command's
// operands (words that are not options): option values in between (aws
// --profile p configure get x) are operands too, so matching anywhere
// rather than at the front over-asks instead of missing one.
var credVerbs = map[string][][]string{
	"gh": {{"auth", "token"}, {"auth", "git-credential"}},
	"aws": {{"configure", "export-credentials"}, {"sts", "get-session-token"}, {"sts", "assume-role"},
		{"sts", "assume-role-with-saml"}, {"sts", "assume-role-with-web-identity"}, {"sts", "get-federation-token"},
		{"ecr", "get-login-password"}, {"ecr", "get-authorization-token"}, {"ecr-public", "get-login-password"},
		{"codeartifact", "get-authorization-token"}, {"sso", "get-role-credentials"}, {"eks", "get-token"},
		{"secretsmanager", "get-secret-value"}, {"rds", "generate-db-auth-token"}, {"iam", "create-access-key"}},
	"kubectl": {{"create", "token"}},
	"gcloud": {{"auth", "print-access-token"}, {"auth", "print-identity-token"}, {"auth", "print-refresh-token"},
		{"auth", "application-default", "print-access-token"}, {"config", "config-helper"},
		{"secrets", "versions", "access"}},
	"az": {{"account", "get-access-token"}, {"keyvault", "secret", "show"}, {"keyvault", "secret", "download"},
		{"ad", "sp", "credential", "reset"}, {"ad", "app", "credential", "reset"}},
	"op":          {{"read"}, {"inject"}, {"run"}, {"item", "get"}, {"document", "get"}, {"signin"}},
	"secret-tool": {{"lookup"}, {"search"}},
	"vault": {{"read"}, {"kv", "get"}, {"token", "lookup"}, {"token", "create"}, {"print", "token"},
		{"login"}, {"unwrap"}},
	"heroku": {{"auth:token"}, {"config"}, {"config:get"}},
	"doctl":  {{"auth", "token"}},
	"fly":    {{"auth", "token"}},
	"flyctl": {{"auth", "token"}},
	"keyctl": {{"print"}, {"read"}, {"pipe"}},
	"glab":   {{"auth", "token"}},
}

// credentialReason says why a command prints a credential, or returns "".
func credentialReason(s *Segment) string {
	if r := envCredentialReason(s); r != "" {
		return r
	}
	name, args := s.Name, s.Args
	ops := operandsOf(args)
	switch {
	case strings.HasPrefix(name, "git-credential-"):
		return name
	case strings.HasPrefix(name, "docker-credential-"), strings.HasPrefix(name, "podman-credential-"):
		if op, _ := firstOperand(args); op != "list" && op != "version" && op != "" {
			return name + " " + op
		}
		return ""
	}
	switch name {
	case "git":
		// git credential fill, git credential-store get and any
		// git-credential-<helper> run through git.
		globals, sub, rest := gitSplit(args)
		if strings.HasPrefix(sub, "credential") {
			return "git " + sub
		}
		// An alias can name the subcommand: git -c alias.t='credential
		// fill' t, GIT_CONFIG_VALUE_0=…, or one defined now for later
		// (git config alias.t 'credential fill'). Any configuration value
		// of the call that mentions credential counts (over-asking a
		// credential.helper setting).
		for k, g := range globals {
			lg := strings.ToLower(g)
			if strings.Contains(lg, "credential") {
				return "git " + g
			}
			if strings.HasPrefix(g, "--config-env") && (strings.Contains(lg, "alias.") ||
				k+1 < len(globals) && strings.Contains(strings.ToLower(globals[k+1]), "alias.")) {
				return "git --config-env alias (known at run time)"
			}
		}
		for _, a := range s.Assigns {
			if name, val, _ := strings.Cut(a, "="); strings.HasPrefix(name, "GIT_CONFIG") &&
				strings.Contains(strings.ToLower(val), "credential") {
				return "git with " + name
			}
		}
		if sub == "config" && slices.ContainsFunc(rest, func(w string) bool { return strings.HasPrefix(strings.ToLower(w), "alias.") }) &&
			slices.ContainsFunc(rest, func(w string) bool { return strings.Contains(strings.ToLower(w), "credential") }) {
			return "git config defining a credential alias"
		}
		return ""
	case "gh", "glab":
		// gh auth status -t/--show-token prints the token.
		if containsSeq(ops, "auth", "status") && (shortCluster(args, "t") || hasPrefixed(args, "--show-token")) {
			return name + " auth status --show-token"
		}
	case "aws":
		// aws configure get aws_secret_access_key (also profile.x.…).
		for i := 0; i+2 < len(ops); i++ {
			if ops[i] == "configure" && ops[i+1] == "get" && secretKeyName(ops[i+2]) {
				return "aws configure get " + ops[i+2]
			}
		}
		if containsSeq(ops, "ssm", "get-parameter") || containsSeq(ops, "ssm", "get-parameters") ||
			containsSeq(ops, "ssm", "get-parameters-by-path") {
			if hasPrefixed(args, "--with-decryption") {
				return "aws ssm get-parameter --with-decryption"
			}
		}
	case "kubectl", "oc":
		// kubectl config view redacts keys and tokens unless --raw.
		if containsSeq(ops, "config", "view") && hasPrefixed(args, "--raw") {
			return name + " config view --raw"
		}
		// kubectl get secret -o yaml/json/jsonpath prints the data.
		if containsSeq(ops, "get") {
			for _, o := range ops {
				if o == "secret" || o == "secrets" || strings.HasPrefix(o, "secret/") || strings.HasPrefix(o, "secrets/") ||
					strings.HasPrefix(o, "secret,") || strings.Contains(o, ",secret") {
					if hasPrefixed(args, "-o", "--output") || shortCluster(args, "o") {
						return name + " get secret -o"
					}
				}
			}
		}
	case "az":
		if containsSeq(ops, "acr", "login") && hasPrefixed(args, "--expose-token") {
			return "az acr login --expose-token"
		}
	case "kwallet-query":
		if shortCluster(args, "r") || hasPrefixed(args, "--read-password") {
			return "kwallet-query --read-password"
		}
	case "pass", "gopass":
		// pass NAME and pass show NAME print the password; pass (the
		// tree), ls, find and the management verbs do not.
		if len(ops) > 0 && !slices.Contains([]string{"ls", "list", "find", "search", "init", "help", "version",
			"git", "rm", "mv", "cp", "generate", "insert", "edit"}, ops[0]) {
			return name + " " + ops[0]
		}
	case "security":
		// macOS keychain: -w prints the password, -g prints it too.
		if len(ops) > 0 && (ops[0] == "find-generic-password" || ops[0] == "find-internet-password") &&
			shortCluster(args, "wg") {
			return "security " + ops[0] + " -w"
		}
		if len(ops) > 0 && ops[0] == "dump-keychain" {
			return "security dump-keychain"
		}
	case "gpg", "gpg2":
		// gpg takes any unique prefix of a long option: --export-secret-k
		// (--export-se is the shortest: --export-s could be --export-ssh-key).
		if longOpt(args, "--export-secret-keys", len("--export-se")) ||
			longOpt(args, "--export-secret-subkeys", len("--export-se")) {
			return name + " --export-secret-keys"
		}
	case "npm", "pnpm", "yarn":
		// npm config get //registry.npmjs.org/:_authToken prints the token.
		for i := 0; i+2 < len(ops); i++ {
			if (ops[i] == "config" || ops[i] == "c") && ops[i+1] == "get" && secretKeyName(ops[i+2]) {
				return name + " config get " + ops[i+2]
			}
		}
	}
	for _, seq := range credVerbs[name] {
		if containsSeq(ops, seq...) {
			return name + " " + strings.Join(seq, " ")
		}
	}
	return ""
}

// operandsOf returns the words that are not options (an option's separate
// value counts as a word), up to and including those after "--".
func operandsOf(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			continue
		}
		out = append(out, a)
	}
	return out
}

// containsSeq reports the words appearing contiguously in ops.
func containsSeq(ops []string, seq ...string) bool {
	if len(seq) == 0 {
		return false
	}
	for i := 0; i+len(seq) <= len(ops); i++ {
		if slices.Equal(ops[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}

// secretKeyName reports a configuration key that names a secret value
// (aws_secret_access_key, aws_session_token, //host/:_authToken).
func secretKeyName(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"secret", "token", "password", "_auth", "access_key", "credential"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// The environment of the bash tool's commands keeps every variable the
// user exported except the provider keys (internal/childenv): GITHUB_TOKEN,
// NPM_TOKEN, AWS_SECRET_ACCESS_KEY and the like are there. A command that
// prints one by name ($GITHUB_TOKEN in any word, assignment or
// here-document, printenv NPM_TOKEN, declare -p AWS_SECRET_ACCESS_KEY,
// os.environ['GH_TOKEN'] in interpreter code) or that dumps the whole
// environment (env, printenv, export, export -p, declare -p/-x, typeset,
// set without arguments) prints a credential, like gh auth token.
// Whether the variable is set is not known here; asking is the answer to
// what cannot be known.

// envDumps are the commands that print every variable with its value when
// given no names (the option clusters that keep them dumping are in
// envDumpReason).
var envDumps = map[string]bool{"env": true, "printenv": true, "export": true, "declare": true,
	"typeset": true, "set": true}

// envCredentialReason says why s prints a credential variable, or "".
func envCredentialReason(s *Segment) string {
	for _, x := range s.args {
		if x.dollar {
			if n := credentialRef(x.raw); n != "" {
				return "$" + n
			}
			if n := indirectRef(x.raw); n != "" {
				return "${!" + n + "}, a variable whose name is only known at run time"
			}
		}
	}
	for _, as := range s.Assigns {
		if _, v, ok := strings.Cut(as, "="); ok {
			if n := credentialRef(v); n != "" {
				return "$" + n
			}
			if n := indirectRef(v); n != "" {
				return "${!" + n + "}, a variable whose name is only known at run time"
			}
		}
	}
	if n := credentialRef(s.stdinText); n != "" {
		return "$" + n + " in the input"
	}
	if r := envDumpReason(s); r != "" {
		return r
	}
	if s.Name == "ps" {
		// BSD-style e (ps e, ps auxe, ps eww) prints every process's
		// environment after its command, this shell's too.
		for _, a := range s.Args {
			if a != "" && a[0] != '-' && strings.ContainsRune(a, 'e') && strings.Trim(a, "aeuxwfjlsvmrTSchnLgG") == "" {
				return "ps " + a + " prints the environment of processes"
			}
		}
	}
	if interpreterNames[s.Name] {
		// Code reads the environment by name: os.environ['GH_TOKEN'],
		// process.env.NPM_TOKEN, ENV["AWS_SECRET_ACCESS_KEY"].
		for _, v := range s.Args {
			for _, tok := range identTokens(v) {
				if credentialVarName(tok) {
					return s.Name + " code naming " + tok
				}
			}
			if d := codeEnvDump(s.Name, v); d != "" {
				return s.Name + " code printing " + d
			}
		}
	}
	return ""
}

// interpreterNames are programs whose arguments may be code that reads
// environment variables by name.
var interpreterNames = map[string]bool{"python": true, "python3": true, "python2": true, "node": true,
	"perl": true, "ruby": true, "php": true, "deno": true, "bun": true, "awk": true, "gawk": true,
	"mawk": true, "jq": true, "lua": true, "tclsh": true, "osascript": true, "pwsh": true}

// envDumpReason says why s prints the whole environment or a named
// credential variable's value, or returns "".
func envDumpReason(s *Segment) string {
	if !envDumps[s.Name] {
		return ""
	}
	var names []string
	var opts string
	for _, a := range s.Args {
		a = strings.TrimPrefix(a, "=") // declare's options come as "=-p"
		switch {
		case a == "--":
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			opts += a[1:]
		default:
			name, _, _ := strings.Cut(a, "=")
			names = append(names, name)
		}
	}
	for _, n := range names {
		if credentialVarName(n) {
			switch s.Name {
			case "printenv", "declare", "typeset", "export":
				if s.Name == "printenv" || strings.ContainsAny(opts, "p") {
					return s.Name + " " + n
				}
			}
		}
	}
	switch s.Name {
	case "env":
		// Only a wrapper is left: nothing runs, env prints everything
		// (assignments and -u included).
		return "env prints the environment"
	case "printenv":
		if len(names) == 0 {
			return "printenv prints the environment"
		}
	case "set":
		if len(names) == 0 && opts == "" {
			return "set prints every variable"
		}
	default: // export, declare, typeset
		if len(names) == 0 && (opts == "" || strings.ContainsAny(opts, "px")) {
			return s.Name + " prints every variable"
		}
	}
	return ""
}

// credentialRef returns the first credential variable that text expands
// ($NAME, ${NAME}, ${NAME:-x}, ${#NAME}, ${!NAME}), or "".
func credentialRef(text string) string {
	for i := 0; i < len(text); i++ {
		if text[i] != '$' {
			continue
		}
		j := i + 1
		if j < len(text) && text[j] == '{' {
			j++
			if j < len(text) && (text[j] == '!' || text[j] == '#') {
				j++
			}
		}
		k := j
		for k < len(text) && isIdentByte(text[k], k > j) {
			k++
		}
		if k > j && credentialVarName(text[j:k]) {
			return text[j:k]
		}
	}
	return ""
}

// indirectRef returns the variable of the first indirect reference in text
// (${!v}, ${!v:-x}: the value of the variable v names), or "". The names
// ${!prefix*} and ${!prefix@} list, and an array's keys (${!a[@]}), are not
// values. v's value is only known at run time (for v in ${!GITHUB*}),
// and a bound credential name (T=GITHUB_TOKEN) is the rule tier's bound
// values' business; asking is the answer to what cannot be known.
func indirectRef(text string) string {
	for i := 0; i+3 < len(text); i++ {
		if text[i] != '$' || text[i+1] != '{' || text[i+2] != '!' {
			continue
		}
		j := i + 3
		k := j
		for k < len(text) && isIdentByte(text[k], k > j) {
			k++
		}
		if k == j || k < len(text) && strings.IndexByte("*@[", text[k]) >= 0 {
			continue
		}
		return text[j:k]
	}
	return ""
}

// identTokens splits v into its identifier-shaped tokens.
func identTokens(v string) []string {
	var out []string
	for i := 0; i < len(v); {
		if !isIdentByte(v[i], false) {
			i++
			continue
		}
		j := i + 1
		for j < len(v) && isIdentByte(v[j], true) {
			j++
		}
		out = append(out, v[i:j])
		i = j
	}
	return out
}

func isIdentByte(c byte, digits bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || digits && c >= '0' && c <= '9'
}

// credentialVarName reports an environment variable name that by
// convention holds a secret: GITHUB_TOKEN, NPM_TOKEN, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, DATABASE_PASSWORD, STRIPE_API_KEY, SSH_PRIVATE_KEY,
// *_KEY. Names of where a secret lives (…_FILE, …_PATH, …_DIR, …_SOCK,
// …_URL) and key ids are not secrets; lower-case names (shell locals) are
// not considered.
func credentialVarName(n string) bool {
	if n != strings.ToUpper(n) || len(n) < 4 {
		return false
	}
	for _, suf := range []string{"_FILE", "_PATH", "_DIR", "_SOCK", "_URL", "_ID", "_NAME", "_TYPE", "_HELPER", "_COMMAND", "_CMD"} {
		if strings.HasSuffix(n, suf) {
			return false
		}
	}
	if strings.HasSuffix(n, "_KEY") || strings.HasSuffix(n, "_PAT") {
		return true
	}
	for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "API_KEY", "APIKEY",
		"ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL", "AUTH_KEY"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// envObjects are how interpreter code names the whole environment:
// Python's os.environ, Node's process.env, Perl's %ENV, awk's ENVIRON, jq's
// $ENV; the bare words jq's env and Ruby's ENV only for those programs
// (elsewhere env is as likely an argument: node app.js --env prod).
var envObjects = []string{"os.environ", "os.environb", ").environ", "process.env", "%ENV", "ENVIRON", "$ENV",
	"Deno.env", "Bun.env", "getenv()"}

var bareEnvObject = map[string]string{"jq": "env", "ruby": "ENV"}

// codeEnvDump returns the environment object that code uses as a whole
// (print(os.environ), for (k in ENVIRON), jq -n env), or "". Use by name
// (os.environ['X'], os.environ.get, process.env.X, ENVIRON["X"], $ENV.X,
// ENV['X']) is credentialVarName's business.
func codeEnvDump(program, code string) string {
	objs := envObjects
	if o := bareEnvObject[program]; o != "" {
		objs = append(objs[:len(objs):len(objs)], o)
	}
	for _, obj := range objs {
		for i := 0; ; {
			k := strings.Index(code[i:], obj)
			if k < 0 {
				break
			}
			k += i
			end := k + len(obj)
			i = end
			if k > 0 && isIdentByte(code[k-1], true) || end < len(code) && isIdentByte(code[end], true) {
				continue // part of a longer name (environment, envsubst)
			}
			if (obj == "env" || obj == "ENV") && k > 0 && strings.IndexByte(".$-", code[k-1]) >= 0 {
				continue // a field (.env), a jq variable ($env), an option (--env)
			}
			rest := strings.TrimLeft(code[end:], " \t")
			if rest == "" || !strings.ContainsAny(rest[:1], "[.{(") || strings.HasPrefix(rest, ".items") ||
				strings.HasPrefix(rest, ".copy") || strings.HasPrefix(rest, ".to_") || strings.HasPrefix(rest, ".each") ||
				strings.HasPrefix(rest, ".values") || strings.HasPrefix(rest, ".inspect") || strings.HasPrefix(rest, ".entries") ||
				strings.HasPrefix(rest, ".map") || strings.HasPrefix(rest, ".select") || strings.HasPrefix(rest, ".filter") ||
				strings.HasPrefix(rest, ".toObject") || strings.HasPrefix(rest, ".sort") || strings.HasPrefix(rest, ".dup") {
				return obj
			}
		}
	}
	return ""
}

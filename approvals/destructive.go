package approvals

import (
	"path"
	"regexp"
	"strings"
)

// What users cannot undo joins the dangerous list, so it asks in every
// mode, full-auto included (and is refused where nobody can be asked):
// the hard-deny categories of seed 003 that the earlier entries did not
// cover. Each category has one stable id, shown by explain and on the
// wire (permission_request and tool_execution_end "dangerous").
const (
	DangerGitPushDelete       = "git-push-delete"      // git push --mirror, --delete, --prune, :ref
	DangerInfraTeardown       = "infra-teardown"       // terraform/pulumi destroy, kubectl delete, cloud deletes
	DangerDatabaseDrop        = "database-drop"        // DROP/TRUNCATE through a database client, FLUSHALL
	DangerPrivilegedContainer = "privileged-container" // docker run --privileged, -v /:/host, host namespaces
	DangerHistoryDestroy      = "history-destruction"  // reflog expire, gc --prune=now, update-ref -d, filter-repo
	DangerPathHijack          = "path-tool-replace"    // writes into ~/.local/bin, ~/bin and other PATH directories
	DangerMining              = "crypto-mining"        // cryptocurrency miners and stratum pools
)

// destructiveDanger adds the categories above for one segment (and
// package-publish, platform-security and kill-all for the programs those
// ids did not know yet).
func (a *Analysis) destructiveDanger(i int) {
	s := &a.Segments[i]
	name, args := s.Name, s.Args
	if minerNames[name] {
		a.addDanger(DangerMining, "runs a cryptocurrency miner ("+name+")")
	}
	for _, v := range args {
		if lv := strings.ToLower(v); strings.Contains(lv, "stratum+tcp://") || strings.Contains(lv, "stratum+ssl://") ||
			strings.Contains(lv, "stratum2+tcp://") {
			a.addDanger(DangerMining, "connects to a mining pool ("+v+")")
		}
	}
	// The command words (operands, with option values among them: a
	// value that spells a verb only errs on the strict side).
	ws := bareWords(args)
	op := ""
	if len(ws) > 0 {
		op = ws[0]
	}
	rest := func() []string {
		for k, v := range args {
			if v == op {
				return args[k+1:]
			}
		}
		return nil
	}
	switch name {
	case "git":
		a.gitHistoryDanger(s)
	case "terraform", "tofu", "terragrunt":
		if hasWord(ws, "destroy") || hasWord(ws, "apply", "plan") && hasPrefixed(args, "-destroy", "--destroy") ||
			hasWord(ws, "state") && hasWord(ws, "rm") || hasWord(ws, "workspace") && hasWord(ws, "delete") {
			a.addDanger(DangerInfraTeardown, "destroys infrastructure ("+name+" destroy)")
		}
	case "pulumi":
		if hasWord(ws, "destroy", "down") || hasWord(ws, "stack") && hasWord(ws, "rm") {
			a.addDanger(DangerInfraTeardown, "destroys infrastructure (pulumi destroy)")
		}
	case "cdk", "sst", "serverless", "sls", "amplify", "copilot":
		if hasWord(ws, "destroy", "remove", "delete") {
			a.addDanger(DangerInfraTeardown, "destroys a deployed stack ("+name+" destroy)")
		}
	case "kubectl", "oc", "k3s", "microk8s", "kubectl.exe":
		if hasWord(ws, "delete", "drain") || hasWord(ws, "replace") && hasPrefixed(args, "--force") {
			a.addDanger(DangerInfraTeardown, "deletes cluster resources ("+name+" delete)")
		}
	case "helm":
		if hasWord(ws, "uninstall", "delete", "del") {
			a.addDanger(DangerInfraTeardown, "uninstalls a release (helm uninstall)")
		}
	case "aws":
		switch {
		case hasWord(ws, "s3") && (hasWord(ws, "rb") || hasWord(ws, "rm") && hasPrefixed(args, "--recursive")):
			a.addDanger(DangerInfraTeardown, "deletes cloud storage (aws s3 rb/rm --recursive)")
		case hasWord(ws, "s3") && hasWord(ws, "sync") && hasPrefixed(args, "--delete"):
			a.addDanger(DangerInfraTeardown, "deletes cloud storage (aws s3 sync --delete)")
		default:
			for _, w := range ws {
				if strings.HasPrefix(w, "delete-") || strings.HasPrefix(w, "terminate-") || strings.HasPrefix(w, "remove-") ||
					w == "deregister" || strings.HasPrefix(w, "purge-") {
					a.addDanger(DangerInfraTeardown, "deletes cloud resources (aws … "+w+")")
					break
				}
			}
		}
	case "gcloud", "az", "doctl", "fly", "flyctl", "heroku", "vercel", "netlify", "linode-cli", "hcloud", "scw", "railway":
		if cloudDeletes(args) {
			a.addDanger(DangerInfraTeardown, "deletes cloud resources ("+name+" … delete)")
		}
	case "gsutil":
		if hasWord(ws, "rb") || hasWord(ws, "rm") && hasPrefixed(args, "-r", "-R", "-a") {
			a.addDanger(DangerInfraTeardown, "deletes cloud storage (gsutil rm -r)")
		}
	case "gh":
		r := rest()
		sub, _ := firstOperand(r)
		switch {
		case op == "repo" && (sub == "delete" || sub == "archive"):
			a.addDanger(DangerInfraTeardown, "deletes or archives a remote repository (gh repo "+sub+")")
		case op == "repo" && sub == "edit" && hasPrefixed(r, "--visibility"):
			a.addDanger(DangerPackagePublish, "changes who can see a repository (gh repo edit --visibility)")
		case op == "release" && (sub == "create" || sub == "upload" || sub == "delete"):
			a.addDanger(DangerPackagePublish, "publishes or deletes a release (gh release "+sub+")")
		case op == "api" && (hasWord(r, "DELETE") || hasPrefixed(r, "--method=DELETE", "-XDELETE")):
			a.addDanger(DangerInfraTeardown, "deletes through the GitHub API (gh api -X DELETE)")
		}
	case "psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "cockroach", "clickhouse-client", "clickhouse",
		"sqlcmd", "mongosh", "mongo", "cqlsh", "usql", "pgcli", "mycli", "litecli", "snowsql", "bq", "turso":
		if sqlDropRE.MatchString(strings.Join(args, " ")) || sqlDropRE.MatchString(s.stdinText) {
			a.addDanger(DangerDatabaseDrop, "drops or empties database objects ("+name+")")
		}
	case "redis-cli", "valkey-cli", "keydb-cli":
		for _, v := range args {
			if u := strings.ToUpper(v); u == "FLUSHALL" || u == "FLUSHDB" {
				a.addDanger(DangerDatabaseDrop, "deletes every key ("+name+" "+u+")")
			}
		}
		if r := strings.ToUpper(s.stdinText); strings.Contains(r, "FLUSHALL") || strings.Contains(r, "FLUSHDB") {
			a.addDanger(DangerDatabaseDrop, "deletes every key ("+name+" FLUSHALL)")
		}
	case "dropdb", "dropuser":
		a.addDanger(DangerDatabaseDrop, "drops a database ("+name+")")
	case "mysqladmin":
		if hasWord(args, "drop") {
			a.addDanger(DangerDatabaseDrop, "drops a database (mysqladmin drop)")
		}
	case "docker", "podman", "nerdctl":
		if op == "run" || op == "create" || op == "container" && hasWord(rest(), "run", "create") {
			if r := privilegedReason(args, a.Home); r != "" {
				a.addDanger(DangerPrivilegedContainer, "starts a container with access to the host ("+r+")")
			}
		}
	case "cargo":
		if op == "publish" || op == "yank" || op == "owner" {
			a.addDanger(DangerPackagePublish, "publishes to a registry (cargo "+op+")")
		}
	case "python", "python3", "py":
		for k := 0; k+2 < len(args); k++ {
			if args[k] == "-m" && hasWord(args[k+1:k+2], "twine", "flit", "hatch", "poetry", "pdm") &&
				hasWord(args[k+2:], "upload", "publish", "register") {
				a.addDanger(DangerPackagePublish, "publishes to a registry ("+name+" -m "+args[k+1]+")")
			}
		}
	case "twine", "flit", "hatch", "poetry", "uv", "pdm", "rye":
		if op == "upload" || op == "publish" || op == "register" {
			a.addDanger(DangerPackagePublish, "publishes to a registry ("+name+" "+op+")")
		}
	case "gem":
		if op == "push" || op == "yank" || op == "owner" {
			a.addDanger(DangerPackagePublish, "publishes to a registry (gem "+op+")")
		}
	case "dotnet", "nuget":
		if op == "nuget" && hasWord(rest(), "push", "delete") || op == "push" || op == "delete" {
			a.addDanger(DangerPackagePublish, "publishes to a package registry ("+name+" push)")
		}
	case "mvn", "mvnw", "gradle", "gradlew", "sbt", "lein":
		if hasWord(args, "deploy", "publish", "publishToMavenCentral", "publishAllPublicationsToMavenCentralRepository",
			"release:perform", "+publish", "publishSigned") {
			a.addDanger(DangerPackagePublish, "publishes artifacts ("+name+")")
		}
	case "vsce", "ovsx", "pod", "jsr", "deno":
		if op == "publish" || name == "pod" && op == "trunk" && hasWord(rest(), "push") {
			a.addDanger(DangerPackagePublish, "publishes a package ("+name+" "+op+")")
		}
	case "setenforce":
		if hasWord(args, "0", "Permissive", "permissive") {
			a.addDanger(DangerPlatformSecurity, "turns off SELinux enforcement (setenforce 0)")
		}
	case "ufw":
		if op == "disable" || op == "reset" || op == "default" && hasWord(rest(), "allow") {
			a.addDanger(DangerPlatformSecurity, "turns off the firewall (ufw "+op+")")
		}
	case "iptables", "ip6tables", "iptables-legacy", "iptables-nft":
		if hasPrefixed(args, "-F", "--flush", "-X", "--delete-chain") || hasWord(args, "-P", "--policy") && hasWord(args, "ACCEPT") {
			a.addDanger(DangerPlatformSecurity, "removes firewall rules ("+name+")")
		}
	case "nft":
		if hasWord(args, "flush") {
			a.addDanger(DangerPlatformSecurity, "removes firewall rules (nft flush)")
		}
	case "sysctl":
		for _, v := range args {
			if k, _, ok := strings.Cut(v, "="); ok && securitySysctl(k) {
				a.addDanger(DangerPlatformSecurity, "weakens kernel protections (sysctl "+v+")")
			}
		}
	case "aa-teardown", "aa-disable", "apparmor_parser":
		if name != "apparmor_parser" || hasPrefixed(args, "-R", "--remove") {
			a.addDanger(DangerPlatformSecurity, "turns off AppArmor profiles ("+name+")")
		}
	case "auditctl":
		if hasWord(args, "-D") || hasWord(args, "-e") && hasWord(args, "0") {
			a.addDanger(DangerPlatformSecurity, "turns off system auditing (auditctl)")
		}
	case "systemctl", "service":
		if hasWord(args, "stop", "disable", "mask", "kill") && hasSecurityUnit(args) {
			a.addDanger(DangerPlatformSecurity, "stops a security service ("+name+")")
		}
	case "killall", "killall5":
		a.addDanger(DangerKillAll, "signals every process with a name ("+name+")")
	case "pkill":
		if strongSignal(args) {
			a.addDanger(DangerKillAll, "kills every matching process with SIGKILL (pkill -9)")
		}
	}
	a.pathHijack(i)
}

// gitHistoryDanger: pushes that delete remote refs, and local history
// that cannot be brought back.
func (a *Analysis) gitHistoryDanger(s *Segment) {
	g := parseGit(s.args)
	p := gitSubTable(g.sub).parse(g.rest)
	switch g.sub {
	case "push":
		if p.has("--dry-run") {
			return
		}
		if p.has("--mirror") || p.has("--delete") || p.has("--prune") {
			a.addDanger(DangerGitPushDelete, "deletes or overwrites refs on the remote (git push --mirror/--delete/--prune)")
		}
		for _, r := range p.operands {
			if strings.HasPrefix(r.val, ":") && len(r.val) > 1 || r.dyn && strings.HasPrefix(r.raw, ":") {
				a.addDanger(DangerGitPushDelete, "deletes a branch on the remote (git push "+r.raw+")")
			}
		}
	case "reflog":
		if op, _ := firstOperand(argVals(g.rest)); op == "expire" || op == "delete" {
			a.addDanger(DangerHistoryDestroy, "discards the reflog, the record that recovers lost commits (git reflog "+op+")")
		}
	case "gc":
		for _, v := range argVals(g.rest) {
			if v == "--prune=now" || v == "--prune=all" || strings.HasPrefix(v, "--prune=") && strings.Contains(v, "now") {
				a.addDanger(DangerHistoryDestroy, "deletes unreachable commits at once (git gc "+v+")")
			}
		}
	case "prune":
		a.addDanger(DangerHistoryDestroy, "deletes unreachable objects (git prune)")
	case "update-ref":
		if vs := argVals(g.rest); hasWord(vs, "-d", "--stdin") {
			a.addDanger(DangerHistoryDestroy, "deletes or rewrites refs directly (git update-ref -d)")
		}
	case "filter-branch", "filter-repo":
		a.addDanger(DangerHistoryDestroy, "rewrites the whole history (git "+g.sub+")")
	case "tag":
		if vs := argVals(g.rest); hasWord(vs, "-d", "--delete") {
			a.addDanger(DangerHistoryDestroy, "deletes a tag (git tag -d)")
		}
	case "stash":
		if op, _ := firstOperand(argVals(g.rest)); op == "clear" {
			a.addDanger(DangerHistoryDestroy, "drops every stash (git stash clear)")
		}
	}
}

// bareWords are the arguments that are not options.
func bareWords(args []string) []string {
	var out []string
	for _, v := range args {
		if v != "" && v[0] != '-' {
			out = append(out, v)
		}
	}
	return out
}

func argVals(args []arg) []string {
	out := make([]string, len(args))
	for i, x := range args {
		out[i] = x.val
	}
	return out
}

// minerNames are cryptocurrency miners.
var minerNames = map[string]bool{
	"xmrig": true, "xmr-stak": true, "minerd": true, "cpuminer": true, "cpuminer-opt": true, "ethminer": true,
	"t-rex": true, "nbminer": true, "lolminer": true, "cgminer": true, "bfgminer": true, "phoenixminer": true,
	"nanominer": true, "gminer": true, "srbminer": true, "srbminer-multi": true, "teamredminer": true, "xmrig-cuda": true,
}

// sqlDropRE finds statements that drop or empty database objects.
var sqlDropRE = regexp.MustCompile(`(?i)\bdrop\s+(table|database|schema|collection|keyspace|view|user|role|index)\b|` +
	`\btruncate\s+(table\s+)?["'\x60\w]|\bdropDatabase\s*\(|\.drop\s*\(\s*\)|\bdeleteMany\s*\(\s*\{\s*\}\s*\)|` +
	`\bdelete\s+from\s+["'\x60\w.]+\s*(;|$|")|\bFLUSHALL\b`)

// cloudDeletes reports a cloud CLI call whose command words include a
// deleting verb (gcloud projects delete, az group delete, fly apps destroy).
func cloudDeletes(args []string) bool {
	for _, v := range args {
		if strings.HasPrefix(v, "-") {
			continue
		}
		switch v {
		case "delete", "destroy", "remove", "rm", "purge", "terminate", "wipe", "purge-deleted":
			return true
		}
	}
	return false
}

// privilegedReason names the option of docker run that reaches the host.
func privilegedReason(args []string, home string) string {
	for k, v := range args {
		val := ""
		if k+1 < len(args) {
			val = args[k+1]
		}
		switch {
		case v == "--privileged" || v == "--privileged=true":
			return "--privileged"
		case v == "--pid=host" || v == "--pid" && val == "host", v == "--ipc=host", v == "--uts=host", v == "--userns=host":
			return v
		case strings.HasPrefix(v, "--cap-add") && (strings.Contains(strings.ToUpper(v+" "+val), "ALL") ||
			strings.Contains(strings.ToUpper(v+" "+val), "SYS_ADMIN")):
			return "--cap-add"
		case strings.HasPrefix(v, "--security-opt") && strings.Contains(v+" "+val, "unconfined"):
			return "--security-opt unconfined"
		case v == "--device" || strings.HasPrefix(v, "--device="):
			return "--device"
		}
		var mount string
		switch {
		case v == "-v" || v == "--volume" || v == "--mount":
			mount = val
		case strings.HasPrefix(v, "--volume=") || strings.HasPrefix(v, "--mount="):
			_, mount, _ = strings.Cut(v, "=")
		case strings.HasPrefix(v, "-v") && len(v) > 2:
			mount = v[2:]
		}
		if mount == "" {
			continue
		}
		src := mount
		if strings.Contains(mount, "source=") || strings.Contains(mount, "src=") {
			for _, f := range strings.Split(mount, ",") {
				if k, x, ok := strings.Cut(f, "="); ok && (k == "source" || k == "src") {
					src = x
				}
			}
		} else {
			src, _, _ = strings.Cut(mount, ":")
		}
		if src == "" || src[0] != '/' && src[0] != '~' && !strings.HasPrefix(src, "$HOME") {
			continue // a named volume
		}
		sp := path.Clean(src)
		if sp == "/" || sp == "~" || sp == "$HOME" || home != "" && within(home, sp) || strings.HasSuffix(sp, "docker.sock") || isSystemRoot(sp) ||
			within(sp, "/etc") || within(sp, "/root") || within(sp, "/proc") || within(sp, "/sys") || within(sp, "/dev") {
			return "mounts " + src
		}
	}
	return ""
}

// securitySysctl are kernel settings whose change weakens protections.
func securitySysctl(key string) bool {
	switch strings.ReplaceAll(key, "/", ".") {
	case "kernel.randomize_va_space", "kernel.yama.ptrace_scope", "kernel.kptr_restrict", "kernel.dmesg_restrict",
		"kernel.unprivileged_bpf_disabled", "kernel.modules_disabled", "kernel.unprivileged_userns_clone",
		"fs.protected_symlinks", "fs.protected_hardlinks", "fs.suid_dumpable", "kernel.perf_event_paranoid",
		"net.ipv4.ip_forward", "vm.mmap_min_addr":
		return true
	}
	return false
}

// hasSecurityUnit reports a firewall, MAC or audit service among the words.
func hasSecurityUnit(args []string) bool {
	for _, v := range args {
		switch strings.TrimSuffix(v, ".service") {
		case "apparmor", "firewalld", "ufw", "iptables", "nftables", "auditd", "selinux", "fail2ban", "clamav-daemon",
			"falco", "osqueryd", "crowdstrike", "falcon-sensor":
			return true
		}
	}
	return false
}

// strongSignal reports pkill with SIGKILL.
func strongSignal(args []string) bool {
	for k, v := range args {
		switch {
		case v == "-9" || v == "-KILL" || v == "-SIGKILL" || v == "--signal=9" || v == "--signal=KILL" || v == "--signal=SIGKILL":
			return true
		case (v == "--signal" || v == "-s") && k+1 < len(args):
			if s := strings.ToUpper(args[k+1]); s == "9" || s == "KILL" || s == "SIGKILL" {
				return true
			}
		}
	}
	return false
}

// pathHijack reports writes that put a program into a directory that is
// (usually) on PATH, where it replaces a tool the user or ama runs.
func (a *Analysis) pathHijack(i int) {
	for _, t := range a.Writes {
		if t.Segment != i || t.Dynamic {
			continue
		}
		if r := pathDirReason(t.Path, a.Home); r != "" {
			a.addDanger(DangerPathHijack, r)
		}
	}
}

// pathBinDirs are the per-user program directories usually on PATH
// (relative to HOME).
var pathBinDirs = []string{".local/bin", "bin", ".cargo/bin", "go/bin", ".npm-global/bin", ".bun/bin", ".deno/bin",
	".volta/bin", ".yarn/bin", ".pyenv/shims", ".rbenv/shims", ".nodenv/shims", ".asdf/shims", ".nix-profile/bin"}

// pathDirReason says why writing p replaces a program on PATH, or "".
func pathDirReason(p, home string) string {
	if home != "" {
		for _, d := range pathBinDirs {
			if strictlyWithin(p, home+"/"+d) {
				return "puts a program into " + "~/" + d + ", which is on PATH (" + p + ")"
			}
		}
	}
	for _, d := range [...]string{"/usr/local/bin", "/usr/local/sbin", "/opt/homebrew/bin", "/opt/local/bin", "/snap/bin"} {
		if strictlyWithin(p, d) {
			return "puts a program into " + d + ", which is on PATH (" + p + ")"
		}
	}
	return ""
}

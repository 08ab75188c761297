package approvals

import (
	"strings"
)

// The deterministic hard-deny categories (TLS weakening, persistence,
// platform security, system-wide deletes and permission changes, the
// agent's own safety files) join the dangerous list: they always ask (deny
// where nobody can be asked) and nothing can lift them.

// interpreters are programs that can write any file their script names.
var interpreters = map[string]bool{
	"python": true, "python3": true, "python2": true, "node": true, "nodejs": true, "deno": true,
	"bun": true, "perl": true, "ruby": true, "php": true, "sd": true, "sed": true, "awk": true,
	"gawk": true, "mawk": true, "vim": true, "vi": true, "nvim": true, "nano": true, "emacs": true,
	"ed": true, "ex": true, "tee": true, "cp": true, "mv": true, "rm": true, "unlink": true,
	"truncate": true, "ln": true, "install": true, "rsync": true,
}

func (a *Analysis) hardDenySegment(i int) {
	s := &a.Segments[i]
	args := s.Args
	for _, as := range s.Assigns {
		if r := tlsAssignReason(as); r != "" {
			a.addDanger(DangerTLS, r)
		}
	}
	if interpreters[s.Name] {
		if mentionsAgentConfig(s.stdinText) {
			a.addDanger(DangerAgentConfig, s.Name+" runs a script that touches the agent's own configuration")
		}
		for _, x := range s.args {
			if mentionsAgentConfig(x.val) || mentionsAgentConfig(x.raw) {
				a.addDanger(DangerAgentConfig, s.Name+" touches the agent's own configuration ("+x.raw+")")
				break
			}
		}
	}
	switch s.Name {
	case "curl":
		opts := mustOpts(s.args, optSpec{short: "oHdXuAeEKrwxTbcFmy", long: []string{"--output", "--header", "--data", "--request", "--user"}})
		if hasOpt(opts, "-k", "--insecure", "--proxy-insecure", "--doh-insecure") {
			a.addDanger(DangerTLS, "turns off TLS certificate checks (curl -k)")
		}
	case "wget":
		if hasWord(args, "--no-check-certificate") {
			a.addDanger(DangerTLS, "turns off TLS certificate checks (wget --no-check-certificate)")
		}
	case "npm", "pnpm", "yarn", "bun":
		if packageTLSOff(args) {
			a.addDanger(DangerTLS, "turns off TLS certificate checks of the package manager ("+s.Name+" config)")
		}
	case "crontab":
		opts, ops, _ := parseArgs(s.args, optSpec{short: "u"})
		if !(len(ops) == 0 && hasOpt(opts, "-l") && !hasOpt(opts, "-e", "-r", "-i")) {
			a.addDanger(DangerPersistence, "installs or changes scheduled jobs (crontab)")
		}
	case "launchctl":
		if op, _ := firstOperand(args); op == "load" || op == "bootstrap" || op == "enable" || op == "submit" {
			a.addDanger(DangerPersistence, "registers a launch agent or daemon (launchctl "+op+")")
		}
	case "systemctl":
		if hasWord(args, "enable", "disable", "reenable", "mask", "link") {
			a.addDanger(DangerPersistence, "changes which services start automatically (systemctl enable/disable)")
		}
	case "security":
		if hasWord(args, "add-trusted-cert") {
			a.addDanger(DangerPlatformSecurity, "adds a trusted root certificate (security add-trusted-cert)")
		}
	case "spctl":
		if hasWord(args, "--master-disable", "--global-disable") {
			a.addDanger(DangerPlatformSecurity, "turns off Gatekeeper (spctl --master-disable)")
		}
	case "csrutil":
		if hasWord(args, "disable") {
			a.addDanger(DangerPlatformSecurity, "turns off System Integrity Protection (csrutil disable)")
		}
	case "chmod", "chown", "chgrp":
		for _, t := range a.Writes {
			if t.Segment == i && !t.Dynamic {
				if r := chmodSystemReason(t.Path, a.Home); r != "" {
					a.addDanger(DangerChmodSystem, r+" ("+s.Name+")")
				}
			}
		}
	case "find":
		a.findDeleteDanger(i)
	}
}

// tlsAssignReason reports environment assignments that turn off TLS
// certificate checks.
func tlsAssignReason(as string) string {
	name, val, ok := strings.Cut(as, "=")
	if !ok {
		return ""
	}
	switch strings.ToUpper(name) {
	case "NODE_TLS_REJECT_UNAUTHORIZED":
		if val == "0" {
			return "turns off TLS certificate checks (NODE_TLS_REJECT_UNAUTHORIZED=0)"
		}
	case "GIT_SSL_NO_VERIFY":
		if val != "" && !isFalseWord(val) {
			return "turns off TLS certificate checks (GIT_SSL_NO_VERIFY)"
		}
	case "PYTHONHTTPSVERIFY":
		if val == "0" {
			return "turns off TLS certificate checks (PYTHONHTTPSVERIFY=0)"
		}
	case "NPM_CONFIG_STRICT_SSL", "YARN_STRICT_SSL", "YARN_ENABLE_STRICT_SSL":
		if isFalseWord(val) {
			return "turns off TLS certificate checks (" + name + "=" + val + ")"
		}
	}
	return ""
}

// packageTLSOff reports `npm config set strict-ssl false`, `cafile null`
// and the --strict-ssl=false flag.
func packageTLSOff(args []string) bool {
	for k, a := range args {
		la := strings.ToLower(a)
		key, val, has := strings.Cut(la, "=")
		key = strings.TrimLeft(key, "-")
		if key != "strict-ssl" && key != "cafile" && key != "enablestrictssl" {
			continue
		}
		if !has && k+1 < len(args) {
			val = strings.ToLower(args[k+1])
		}
		if (key == "cafile" && val == "null") || (key != "cafile" && isFalseWord(val)) {
			return true
		}
	}
	return false
}

// findDeleteDanger reports find deleting below /, HOME or system
// directories (-delete, or -exec with a deleting command).
func (a *Analysis) findDeleteDanger(i int) {
	s := &a.Segments[i]
	deletes := hasWord(s.Args, "-delete")
	for k, x := range s.Args {
		if (x == "-exec" || x == "-execdir" || x == "-ok" || x == "-okdir") && k+1 < len(s.Args) {
			switch s.Args[k+1] {
			case "rm", "/bin/rm", "/usr/bin/rm", "rmdir", "unlink", "shred":
				deletes = true
			}
		}
	}
	if !deletes {
		return
	}
	roots, _ := findRoots(s.args)
	for _, x := range roots {
		if x.dyn {
			if r := dynamicDeleteReason(x.prefix, s.dir, a.Cwd, a.Home); r != "" {
				a.addDanger(DangerFindDeleteSystem, "find deletes below "+r+" ("+x.raw+")")
			}
			continue
		}
		if p, ok := joinPath(s.dir, x.val); ok {
			if r := systemDeleteReason(p, a.Cwd, a.Home); r != "" {
				a.addDanger(DangerFindDeleteSystem, "find deletes files below "+r)
			}
		}
	}
}

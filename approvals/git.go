package approvals

import "strings"

// gitSplit separates git's global options from the subcommand and its
// arguments. Global options that take a separate value keep it next to them.
func gitSplit(args []string) (globals []string, sub string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix":
			globals = append(globals, a)
			if i+1 < len(args) {
				globals = append(globals, args[i+1])
				i++
			}
			continue
		}
		if strings.HasPrefix(a, "-") {
			globals = append(globals, a)
			continue
		}
		return globals, a, args[i+1:]
	}
	return globals, "", nil
}

// gitGlobalsPlain reports that the global options are limited to -C DIR and
// --no-pager (anything else, like -c or --git-dir, can run other programs).
func gitGlobalsPlain(globals []string) bool {
	for i := 0; i < len(globals); i++ {
		switch globals[i] {
		case "--no-pager":
		case "-C":
			i++
		default:
			return false
		}
	}
	return true
}

// gitTLSOff reports `-c http.sslVerify=false` style global options.
func gitTLSOff(globals []string) bool {
	for i := 0; i+1 < len(globals); i++ {
		if globals[i] != "-c" {
			continue
		}
		k, v, _ := strings.Cut(globals[i+1], "=")
		if isSSLVerifyKey(k) && isFalseWord(v) {
			return true
		}
	}
	return false
}

func isSSLVerifyKey(k string) bool {
	k = strings.ToLower(k)
	return strings.HasPrefix(k, "http.") && strings.HasSuffix(k, ".sslverify")
}

func isFalseWord(v string) bool {
	switch strings.ToLower(v) {
	case "false", "0", "no", "off":
		return true
	}
	return false
}

// gitBranchListing reports a `git branch` that only lists branches.
func gitBranchListing(rest []string) bool {
	listing := false
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			return false
		case strings.HasPrefix(a, "--"):
			name, _, has := strings.Cut(a, "=")
			switch name {
			case "--delete", "--move", "--copy", "--force", "--set-upstream-to", "--set-upstream",
				"--unset-upstream", "--edit-description", "--track", "--no-track", "--create-reflog", "--recurse-submodules":
				return false
			case "--list", "--all", "--remotes":
				listing = true
			case "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format":
				listing = true
				if !has {
					i++
				}
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if strings.ContainsAny(a[1:], "dDmMcCfuet") {
				return false
			}
			if strings.ContainsAny(a[1:], "lar") {
				listing = true
			}
		default:
			if !listing {
				return false // `git branch NAME` creates a branch
			}
		}
	}
	return true
}

// gitReadSafe reports the read-only git invocations of the safe lists.
func gitReadSafe(args []string) bool {
	globals, sub, rest := gitSplit(args)
	if !gitGlobalsPlain(globals) {
		return false
	}
	switch sub {
	case "status", "rev-parse", "blame", "ls-files":
		return true
	case "diff", "log", "show":
		for _, a := range rest {
			if a == "--" {
				break
			}
			if hasPrefixed([]string{a}, "--output", "--ext-diff", "--textconv", "--open-files-in-pager") ||
				strings.HasPrefix(a, "-O") {
				return false
			}
		}
		return true
	case "branch":
		return gitBranchListing(rest)
	}
	return false
}

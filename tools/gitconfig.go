package tools

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// maxGitConfigBytes is how much of one repository config file is read.
const maxGitConfigBytes = 1 << 20

// gitConfigRisk says why git in dir would run a program named by the
// repository's own configuration even for a read-only command (git diff,
// log, show, status), or returns "": diff.external, diff.<driver>.textconv
// or .command (chosen by .gitattributes), filter.<driver>.clean, .smudge or
// .process, gpg programs (log --show-signature, %G? formats),
// log.showSignature, and includes of other files (not followed: judged
// risky). The repository is found as git finds it, walking up from dir to
// the first .git (a directory, or a file with "gitdir:"); its config,
// config.worktree and the common directory's config are scanned. The
// bash tool's forced settings (env.go) cover core.fsmonitor and
// core.pager. Written here rather than running git: reading the files is
// enough and runs nothing the repository controls.
func gitConfigRisk(dir string) string {
	gitDir := findGitDir(dir)
	if gitDir == "" {
		return ""
	}
	files := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}
	if b, _, err := readRegularFile(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		files = append(files, filepath.Join(common, "config"), filepath.Join(common, "config.worktree"))
	}
	for _, f := range files {
		b, _, err := readRegularFile(f, maxGitConfigBytes)
		if err != nil {
			continue
		}
		if r := scanGitConfig(b); r != "" {
			return r + " in " + f
		}
	}
	return ""
}

// findGitDir walks up from dir to the repository's git directory.
func findGitDir(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		if fi, err := os.Lstat(p); err == nil {
			switch {
			case fi.IsDir():
				return p
			case fi.Mode().IsRegular():
				b, _, err := readRegularFile(p, 4096)
				if err != nil {
					return ""
				}
				g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
				if !ok {
					return ""
				}
				g = strings.TrimSpace(g)
				if !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				return g
			}
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// scanGitConfig finds the settings gitConfigRisk looks for. It errs on
// the strict side: a key is flagged whatever its value.
func scanGitConfig(b []byte) string {
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), maxGitConfigBytes)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "an unreadable section header"
			}
			fields := strings.FieldsFunc(line[1:end], func(r rune) bool { return r == ' ' || r == '\t' || r == '.' || r == '"' })
			section = ""
			if len(fields) > 0 {
				section = strings.ToLower(fields[0])
			}
			line = strings.TrimSpace(line[end+1:])
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key := line
		if i := strings.IndexAny(key, "= \t"); i >= 0 {
			key = key[:i]
		}
		key = strings.ToLower(key)
		switch section {
		case "diff":
			if key == "external" || key == "textconv" || key == "command" {
				return "diff." + key + " (a program run by git diff, log and show)"
			}
		case "filter":
			if key == "clean" || key == "smudge" || key == "process" {
				return "filter." + key + " (a program run by git status and diff)"
			}
		case "gpg":
			if key == "program" {
				return "a gpg program (run to verify signatures)"
			}
		case "log":
			if key == "showsignature" {
				return "log.showSignature (runs the gpg program)"
			}
		case "include", "includeif":
			return "an include of other configuration"
		}
	}
	if sc.Err() != nil {
		return "an unreadable configuration"
	}
	return ""
}

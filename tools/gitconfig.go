package tools

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
//
// aliases are the repository's alias names (lower case): an alias, shell
// ("!cmd") or not ("-c diff.external=x diff"), runs what the repository
// says, so git running one of them is judged by the caller (git never
// lets an alias shadow a built-in command, so only those names matter).
func gitConfigRisk(dir string) (risk string, aliases []string) {
	gitDir := findGitDir(dir)
	if gitDir == "" {
		return "", nil
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
		b, more, err := readRegularFile(f, maxGitConfigBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			continue
		case err != nil:
			// git reads what this cannot (a FIFO a command writes to).
			return "an unreadable configuration (" + err.Error() + ")", nil
		case more:
			// The part not read could set anything.
			return "a configuration larger than " + strconv.Itoa(maxGitConfigBytes) + " bytes in " + f, nil
		}
		if r := scanGitConfig(b, func(name string) { aliases = append(aliases, name) }); r != "" {
			return r + " in " + f, nil
		}
	}
	return "", aliases
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
// the strict side: a key is flagged whatever its value. It reads the file
// the way git's own parser (config.c) does, since a scanner that splits
// lines differently misses what git sees: a UTF-8 byte order mark at the
// start is skipped, "\r\n" is a line end but a lone "\r" is white space
// (so "[core]\r[diff]\rexternal = x" is diff.external to git), a section
// header may be followed by a key on the same line, a value runs to the
// end of the line outside quotes and continues after a backslash at the
// end of a line. What git would refuse to parse is flagged too.
//
// alias is called with each key of the alias section (may be nil).
func scanGitConfig(b []byte, alias func(name string)) string {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	section := ""
	i := 0
	next := func() (byte, bool) {
		if i >= len(b) {
			return '\n', false
		}
		c := b[i]
		i++
		if c == '\r' && i < len(b) && b[i] == '\n' {
			i++
			return '\n', true
		}
		return c, true
	}
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	alpha := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	keyChar := func(c byte) bool { return alpha(c) || c >= '0' && c <= '9' || c == '-' }
	const unreadable = "an unreadable configuration"
	for i < len(b) {
		c, _ := next()
		switch {
		case space(c):
			continue
		case c == '#' || c == ';':
			for c != '\n' {
				c, _ = next()
			}
			continue
		case c == '[':
			// [section], [section "sub"], [section.sub]: only the part
			// before the first dot or blank names the section.
			var name []byte
			for {
				c, ok := next()
				if !ok || c == '\n' {
					return "an unreadable section header"
				}
				if c == ']' {
					break
				}
				if space(c) {
					// [section "subsection"]: skip to the closing bracket
					// (quotes may hold anything, backslash escapes).
					quoted := false
					for {
						c, ok = next()
						if !ok || c == '\n' {
							return "an unreadable section header"
						}
						if c == '\\' && quoted {
							next()
							continue
						}
						if c == '"' {
							quoted = !quoted
							continue
						}
						if c == ']' && !quoted {
							break
						}
					}
					break
				}
				if !keyChar(c) && c != '.' {
					return "an unreadable section header"
				}
				name = append(name, c)
			}
			section, _, _ = strings.Cut(strings.ToLower(string(name)), ".")
			continue
		case !alpha(c):
			return unreadable
		}
		key := []byte{c}
		for {
			c, _ = next()
			if !keyChar(c) {
				break
			}
			key = append(key, c)
		}
		for c == ' ' || c == '\t' {
			c, _ = next()
		}
		if c != '\n' {
			if c != '=' {
				return unreadable
			}
			// The value: to the end of the line outside quotes, a
			// backslash-newline continues it, a comment ends it.
			quoted, comment := false, false
			for {
				c, ok := next()
				if c == '\n' && (!ok || !quoted) {
					break
				}
				if c == '\n' {
					return unreadable // a newline inside quotes
				}
				switch {
				case comment:
				case c == '\\':
					if e, _ := next(); e != '\n' && !strings.ContainsRune("tbn\"\\", rune(e)) {
						return unreadable
					}
				case c == '"':
					quoted = !quoted
				case !quoted && (c == '#' || c == ';'):
					comment = true
				}
			}
		}
		k := strings.ToLower(string(key))
		if r := riskyGitKey(section, k); r != "" {
			return r
		}
		if section == "alias" && alias != nil {
			alias(k)
		}
	}
	return ""
}

// riskyGitKey says why a key of a repository's configuration makes a
// read-only git command run a program, or returns "".
func riskyGitKey(section, key string) string {
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
	return ""
}

package templates

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// MaxFile bounds a template file: larger files are skipped with a
// warning (a prompt is not a place for megabytes).
const MaxFile = 256 << 10

// Scopes of a template's directory.
const (
	ScopeProfile = "profile"
	ScopeUser    = "user"
	ScopeProject = "project"
)

// Dir is one directory to discover templates in. Root, when set, is the
// tree the files must stay in (the project, for .ama/prompts).
type Dir struct {
	Path  string
	Scope string
	Root  string
}

// Template is one discovered template.
type Template struct {
	Name         string
	Description  string
	ArgumentHint string
	Path         string
	Root         string
	Scope        string
}

// Discover reads the direct *.md children of each directory, in the
// given order and by ascending file name within one; the first definition
// of a name wins. Missing directories and entries that are not regular
// files are skipped silently; an invalid name, a duplicate, a file over
// MaxFile, one that is not UTF-8 or that ownfs refuses (a link out of the
// project, a credential file, a second hard link) are skipped with one
// warning each.
func Discover(dirs []Dir) ([]Template, []string) {
	var out []Template
	var warnings []string
	first := map[string]string{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d.Path)
		if err != nil {
			continue
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".md") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names) // byte order; ama sorts by UTF-16 code unit (equal for ASCII names, the only valid ones)
		for _, file := range names {
			path := filepath.Join(d.Path, file)
			name := strings.TrimSuffix(file, ".md")
			if !validName(name) {
				warnings = append(warnings, fmt.Sprintf("%s: invalid command name %q", path, name))
				continue
			}
			t := Template{Name: name, Path: path, Root: d.Root, Scope: d.Scope}
			text, err := read(t)
			if err != nil {
				if skipSilently(err) {
					continue
				}
				warnings = append(warnings, fmt.Sprintf("%s: skipped: %v", path, errText(err)))
				continue
			}
			if at, dup := first[name]; dup {
				warnings = append(warnings, fmt.Sprintf("%s: prompt \"/%s\" already defined at %s; ignored", path, name, at))
				continue
			}
			first[name] = path
			front, body, _ := SplitFrontMatter(text)
			meta := Strings(front)
			t.Description, t.ArgumentHint = meta["description"], meta["argument-hint"]
			if t.Description == "" {
				t.Description = firstLine(body)
			}
			out = append(out, t)
		}
	}
	return out, warnings
}

// Read returns the template's body, read again from disk: front matter
// removed, leading newlines removed, trailing text kept.
func Read(t Template) (string, error) {
	text, err := read(t)
	if err != nil {
		return "", err
	}
	_, body, _ := SplitFrontMatter(text)
	return strings.TrimLeft(body, "\n"), nil
}

// Find returns the template named name (exact comparison).
func Find(list []Template, name string) (Template, bool) {
	for _, t := range list {
		if t.Name == name {
			return t, true
		}
	}
	return Template{}, false
}

// read reads the normalized text of a template file through ownfs.
func read(t Template) (string, error) {
	var b []byte
	var err error
	if t.Root != "" {
		b, err = ownfs.ReadIn(t.Root, t.Path, MaxFile)
	} else {
		// The user's links are followed (dotfile managers), but never to a
		// credential file: the body goes to the model.
		b, err = ownfs.ReadUserIn(filepath.Dir(t.Path), t.Path, MaxFile)
	}
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", &fs.PathError{Op: "read", Path: t.Path, Err: errNotUTF8}
	}
	return normalize(string(b)), nil
}

var errNotUTF8 = errors.New("not valid UTF-8")

// skipSilently: entries that are missing or not regular files are not
// templates at all (a directory named x.md, a dangling link, a FIFO).
func skipSilently(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, ownfs.ErrNotRegular) || errors.Is(err, fs.ErrPermission)
}

// errText is the reason without the path the warning already names.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// validName: a letter or digit, then letters, digits, _ and -.
func validName(s string) bool {
	if s == "" || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !alnum(s[i]) && s[i] != '_' && s[i] != '-' {
			return false
		}
	}
	return true
}

// firstLine is the first non-empty line of body, trimmed, cut to 80
// UTF-16 code units (never inside a character).
func firstLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		n := 0
		for i, r := range l {
			n += utf16.RuneLen(r)
			if n > 80 {
				return l[:i]
			}
		}
		return l
	}
	return ""
}

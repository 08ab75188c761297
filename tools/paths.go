package tools

import (
	"os"
	"path/filepath"
	"strings"
)

// cwd returns the session working directory, or the process's when unset.
func (e *Env) cwd() string {
	if e != nil && e.Cwd != "" {
		return filepath.Clean(e.Cwd)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return wd
}

// Abs resolves a path the model gave: "~" and "~/…" expand to the home
// directory, relative paths are taken relative to Cwd, and the result is
// cleaned. Symlinks are not resolved.
func (e *Env) Abs(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home := e.home(); home != "" {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.cwd(), p)
	}
	return filepath.Clean(p)
}

// Rel returns how results mention the absolute path abs: relative to Cwd
// (slash-separated, "." for Cwd itself) when it is inside Cwd, else abs.
func (e *Env) Rel(abs string) string {
	rel, ok := relInside(e.cwd(), abs)
	if !ok {
		return abs
	}
	return rel
}

// relInside returns target relative to base, slash-separated, when target
// is base or below it.
func relInside(base, target string) (string, bool) {
	// The walks ask this for every entry, with target built by
	// filepath.Join below a clean base: answer without filepath.Rel then.
	if n := len(base); n > 1 && len(target) > n+1 && target[n] == '/' && target[:n] == base &&
		filepath.Separator == '/' && cleanRel(target[n+1:]) && filepath.Clean(base) == base {
		return target[n+1:], true
	}
	rel, err := filepath.Rel(base, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// plural returns "1 file", "2 files".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return itoa(n) + " " + word + "s"
}

// within reports whether the absolute path p is root or below it.
func within(p, root string) bool {
	_, ok := relInside(root, p)
	return ok && root != ""
}

// underName names a path found below the real directory realRoot by the
// spelling lexRoot the model used for it (results keep the model's names).
func underName(lexRoot, realRoot, abs string) string {
	rel, ok := relInside(realRoot, abs)
	if !ok {
		return abs
	}
	return filepath.Join(lexRoot, filepath.FromSlash(rel))
}

// cleanRel reports a relative slash path that filepath.Clean leaves as it
// is and that does not climb: no empty, "." or ".." component.
func cleanRel(p string) bool {
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		switch p[start:i] {
		case "", ".", "..":
			return false
		}
		start = i + 1
	}
	return true
}

package skills

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Skill is one discovered skill.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Location is the path of the skill's markdown file.
	Location string `json:"location"`
	Source   string `json:"source"` // builtin, user, project
}

//go:embed ama-docs.md
var amaDocs []byte

// BuiltinName is the name of the skill that documents ama-rpc itself.
const BuiltinName = "ama-docs"

// Builtin writes the built-in documentation skill to
// <dataDir>/builtin/ama-docs.md (when missing or outdated) and returns it.
func Builtin(dataDir string) (Skill, error) {
	path := filepath.Join(dataDir, "builtin", BuiltinName+".md")
	s := Skill{Name: BuiltinName, Description: "How to configure and use ama itself.", Location: path, Source: "builtin"}
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, amaDocs) {
		return s, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return s, fmt.Errorf("builtin skill: %w", err)
	}
	if err := os.WriteFile(path, amaDocs, 0o600); err != nil {
		return s, fmt.Errorf("builtin skill: %w", err)
	}
	return s, nil
}

// Discover returns the skills found as <dir>/<name>/SKILL.md in each
// directory (missing directories are ignored), sorted by name within each
// source. A later directory's skill replaces an earlier one of the same name.
func Discover(dirs map[string]string) []Skill {
	byName := map[string]Skill{}
	for _, source := range []string{"user", "project"} {
		dir := dirs[source]
		if dir == "" {
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(dir, "*", "SKILL.md"))
		for _, m := range matches {
			sk, ok := parse(m)
			if !ok {
				continue
			}
			sk.Source = source
			byName[sk.Name] = sk
		}
	}
	out := make([]Skill, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// parse reads the front matter (name, description) of a SKILL.md; the
// directory name is the default name.
func parse(path string) (Skill, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Skill{}, false
	}
	defer f.Close()
	s := Skill{Name: filepath.Base(filepath.Dir(path)), Location: path}
	sc := bufio.NewScanner(f)
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "---" {
		return s, true
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "---" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimSpace(k) {
		case "name":
			if v != "" {
				s.Name = v
			}
		case "description":
			s.Description = v
		}
	}
	return s, true
}

// Section renders the skills part of the system prompt ("" when none).
func Section(list []Skill) string {
	if len(list) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Skills: if the task fits one of these, read its file before you start, and resolve the relative paths it mentions from the file's own directory.\n<available_skills>")
	for _, s := range list {
		fmt.Fprintf(&b, "\n<skill name=\"%s\" location=\"%s\">%s</skill>",
			html.EscapeString(s.Name), html.EscapeString(s.Location), html.EscapeString(s.Description))
	}
	b.WriteString("\n</available_skills>")
	return b.String()
}

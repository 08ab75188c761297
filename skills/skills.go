package skills

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"html"
	"path/filepath"
	"sort"
	"strings"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// Skill is one discovered skill.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Location is the path of the skill's markdown file.
	Location string `json:"location"`
	// Root is the tree the file must stay in when ama-rpc reads it (the
	// project, for project skills; see Read). Empty for the user's own
	// skills, whose links are the user's.
	Root   string `json:"-"`
	Source string `json:"source"` // builtin, user, project
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
	if cur, err := ownfs.ReadUser(path, ownfs.MaxConfig); err == nil && bytes.Equal(cur, amaDocs) {
		return s, nil
	}
	if err := ownfs.WriteAtomic(filepath.Dir(path), filepath.Base(path), amaDocs); err != nil {
		return s, fmt.Errorf("builtin skill: %w", err)
	}
	return s, nil
}

// Read returns a skill file's content: a project skill through
// ownfs.ReadIn (links may lead anywhere inside the project, not out of it,
// nor to a credential file), a user or built-in skill through
// ownfs.ReadUser.
func Read(s Skill) ([]byte, error) {
	if s.Root != "" {
		return ownfs.ReadIn(s.Root, s.Location, ownfs.MaxConfig)
	}
	return ownfs.ReadUser(s.Location, ownfs.MaxConfig)
}

// Discover returns the skills found as <dir>/<name>/SKILL.md in each
// directory (missing directories are ignored), sorted by name within each
// source. A later directory's skill replaces an earlier one of the same name.
// The "project" directory is <project>/.ama/skills: its files are read with
// <project> as their Root (see Read).
func Discover(dirs map[string]string) []Skill {
	byName := map[string]Skill{}
	for _, source := range []string{"user", "project"} {
		dir := dirs[source]
		if dir == "" {
			continue
		}
		root := ""
		if source == "project" {
			root = filepath.Dir(filepath.Dir(dir))
		}
		matches, _ := filepath.Glob(filepath.Join(dir, "*", "SKILL.md"))
		for _, m := range matches {
			sk, ok := parse(m, root)
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
func parse(path, root string) (Skill, bool) {
	s := Skill{Name: filepath.Base(filepath.Dir(path)), Location: path, Root: root}
	data, err := Read(s)
	if err != nil {
		return Skill{}, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
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

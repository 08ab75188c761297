package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// ErrInvalidDefinition is wrapped by every definition-file error.
var ErrInvalidDefinition = errors.New("invalid agent definition")

var nameRE = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

var thinkingLevels = map[string]bool{"off": true, "minimal": true, "low": true, "medium": true, "high": true, "xhigh": true}

// ParseDefinition reads one agent definition: YAML front matter between
// "---" lines (kebab-case keys) and the role text as the body
// (agents.md §5.2). Unknown and ignored keys pass; warnings name keys that
// do not apply.
func ParseDefinition(path, source string, data []byte) (*Type, []string, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidDefinition, path, fmt.Sprintf(format, args...))
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, nil, bad("no front matter (the file must start with ---)")
	}
	front, body, ok := strings.Cut(text[4:], "\n---")
	if !ok {
		return nil, nil, bad("front matter is not closed by ---")
	}
	body = strings.TrimPrefix(strings.TrimLeft(body, "-"), "\n")
	var m map[string]any
	dec := yaml.NewDecoder(bytes.NewReader([]byte(front)))
	if err := dec.Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, bad("front matter: %v", err)
	}
	t := &Type{Name: strings.TrimSuffix(filepath.Base(path), ".md"), Runner: RunnerAma, Source: source, FilePath: path,
		MaxTurns: DefaultMaxTurns, Body: strings.TrimSpace(body)}
	var warnings []string
	str := func(k string) (string, bool, error) {
		v, ok := m[k]
		if !ok || v == nil {
			return "", false, nil
		}
		switch v := v.(type) {
		case string:
			return strings.TrimSpace(v), true, nil
		case bool, int, float64:
			return fmt.Sprint(v), true, nil
		}
		return "", false, bad("%s must be a string", k)
	}
	list := func(k string) ([]string, error) {
		v, ok := m[k]
		if !ok || v == nil {
			return nil, nil
		}
		var out []string
		switch v := v.(type) {
		case string:
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
		case []any:
			for _, x := range v {
				s, ok := x.(string)
				if !ok {
					return nil, bad("%s must list strings", k)
				}
				out = append(out, strings.TrimSpace(s))
			}
		default:
			return nil, bad("%s must be a list", k)
		}
		return out, nil
	}
	var err error
	if v, ok, e := str("name"); e != nil {
		return nil, nil, e
	} else if ok {
		t.Name = v
	}
	if !nameRE.MatchString(t.Name) {
		return nil, nil, bad("name %q must match [a-z0-9-]{1,64}", t.Name)
	}
	desc, _, e := str("description")
	if e != nil {
		return nil, nil, e
	}
	if desc == "" || len(desc) > 1024 {
		return nil, nil, bad("description is required (at most 1024 characters)")
	}
	t.Description = desc
	if t.Tools, err = list("tools"); err != nil {
		return nil, nil, err
	}
	if t.Disallowed, err = list("disallowed-tools"); err != nil {
		return nil, nil, err
	}
	if len(t.Tools) > 0 && len(t.Disallowed) > 0 {
		return nil, nil, bad("tools and disallowed-tools exclude each other")
	}
	if v, _, e := str("permission-mode"); e != nil {
		return nil, nil, e
	} else {
		switch v {
		case "", "inherit":
		case "plan", "read-only", "readonly":
			t.ReadOnly = true
		default:
			return nil, nil, bad("permission-mode must be inherit or plan, not %q", v)
		}
	}
	if v, ok, e := str("model"); e != nil {
		return nil, nil, e
	} else if ok {
		t.Model = v
	}
	if v, ok, e := str("thinking"); e != nil {
		return nil, nil, e
	} else if ok {
		if !thinkingLevels[v] {
			return nil, nil, bad("thinking must be off, minimal, low, medium, high or xhigh, not %q", v)
		}
		t.Thinking = v
	}
	if v, ok := m["max-turns"]; ok && v != nil {
		n, isInt := v.(int)
		if !isInt || n < 1 {
			return nil, nil, bad("max-turns must be an integer of at least 1")
		}
		t.MaxTurns = n
	}
	if v, _, e := str("isolation"); e != nil {
		return nil, nil, e
	} else if v != "" && v != "none" && v != "worktree" {
		return nil, nil, bad("isolation must be none or worktree, not %q", v)
	} else {
		t.Isolation = v
	}
	if v, ok := m["background"]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return nil, nil, bad("background must be true or false")
		}
		t.Background = &b
	}
	if v, _, e := str("context"); e != nil {
		return nil, nil, e
	} else if v != "" && v != "fresh" && v != "fork" {
		return nil, nil, bad("context must be fresh or fork, not %q", v)
	} else {
		t.Context = v
	}
	if v, _, e := str("runner"); e != nil {
		return nil, nil, e
	} else if v != "" && v != RunnerAma {
		if v != AgentClaude && v != AgentCodex && !(strings.HasPrefix(v, "acp:") && IsExternal(v)) {
			return nil, nil, bad("runner must be ama, claude, codex or acp:<program>, not %q", v)
		}
		// An external agent has its own tools and permission policy.
		for _, k := range []string{"tools", "disallowed-tools", "permission-mode"} {
			if _, ok := m[k]; ok {
				warnings = append(warnings, fmt.Sprintf("agent definition %s: %s is ignored for the external runner %s", path, k, v))
			}
		}
		t.Runner, t.Tools, t.Disallowed, t.ReadOnly = v, nil, nil, false
	}
	return t, warnings, nil
}

// DefinitionDir is one place definitions are read from.
type DefinitionDir struct {
	Path   string
	Source string // cli, user, project
	// Root, when set, is the tree the definitions must stay in (the
	// project: read with ownfs.ReadIn). Unset: the user's own files.
	Root string
}

// Discover reads the *.md definitions of dirs in order (first definition of
// a name wins). Invalid files are skipped with a warning; a missing
// directory is empty.
func Discover(dirs []DefinitionDir) ([]*Type, []string) {
	var out []*Type
	var warnings []string
	seen := map[string]bool{}
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(d.Path, "*.md"))
		if err != nil {
			continue
		}
		sort.Strings(files)
		for _, f := range files {
			var data []byte
			var err error
			if d.Root != "" {
				data, err = ownfs.ReadIn(d.Root, f, ownfs.MaxConfig)
			} else {
				data, err = ownfs.ReadUser(f, ownfs.MaxConfig)
			}
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("agent definition %s: %v", f, err))
				continue
			}
			t, w, err := ParseDefinition(f, d.Source, data)
			warnings = append(warnings, w...)
			if err != nil {
				warnings = append(warnings, err.Error())
				continue
			}
			if seen[t.Name] {
				continue
			}
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	return out, warnings
}

// Dirs returns the definition directories in discovery order: --agent-dir
// values, config agents.dirs, <configDir>/agents, and <project>/.ama/agents
// only when the project is trusted. The second result warns about a
// project directory that was skipped.
func Dirs(cliDirs, configDirs []string, configDir, project string, trusted bool) ([]DefinitionDir, string) {
	var out []DefinitionDir
	for _, d := range cliDirs {
		out = append(out, DefinitionDir{Path: d, Source: SourceCLI})
	}
	for _, d := range configDirs {
		out = append(out, DefinitionDir{Path: d, Source: SourceUser})
	}
	if configDir != "" {
		out = append(out, DefinitionDir{Path: filepath.Join(configDir, "agents"), Source: SourceUser})
	}
	pd := filepath.Join(project, ".ama", "agents")
	if trusted {
		return append(out, DefinitionDir{Path: pd, Source: SourceProject, Root: project}), ""
	}
	if fi, err := os.Stat(pd); err == nil && fi.IsDir() {
		return out, "project agent definitions in " + pd + " are skipped: the project is not trusted (pass --trust)"
	}
	return out, ""
}

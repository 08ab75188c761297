package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// ErrInvalid marks a hooks file that cannot be used (exit code 3).
var ErrInvalid = errors.New("invalid hooks file")

// Timeout bounds (spec §1.3).
const (
	DefaultTimeout = 60 * time.Second
	MaxTimeout     = 600 * time.Second
)

// Command is one configured hook command, flattened.
type Command struct {
	Event   Event
	Matcher *Matcher // nil: every tool (and for non-tool events)
	Command string
	// TimeoutMs is the configured timeout (0: the default).
	TimeoutMs float64
	// Source is the layer tag: user, profile or project.
	Source string
	// File is the file the command came from.
	File string
}

// Timeout is the effective timeout: min(max(1, floor(t)), 600000) ms.
func (c *Command) Timeout(def time.Duration) time.Duration {
	ms := float64(def / time.Millisecond)
	if c.TimeoutMs != 0 {
		ms = c.TimeoutMs
	}
	ms = math.Min(math.Max(1, math.Floor(ms)), float64(MaxTimeout/time.Millisecond))
	return time.Duration(ms) * time.Millisecond
}

// Set is the flattened configuration: per event, commands in
// configuration order.
type Set struct {
	byEvent [numEvents][]*Command
}

// Commands returns the commands of e in configuration order.
func (s *Set) Commands(e Event) []*Command {
	if s == nil {
		return nil
	}
	if i := eventIndex(e); i >= 0 {
		return s.byEvent[i]
	}
	return nil
}

// Len is the number of commands.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	n := 0
	for _, c := range s.byEvent {
		n += len(c)
	}
	return n
}

// Append adds the commands of o after those of s (layer concatenation).
func (s *Set) Append(o *Set) {
	if o == nil {
		return
	}
	for i := range o.byEvent {
		s.byEvent[i] = append(s.byEvent[i], o.byEvent[i]...)
	}
}

// Parse validates one hooks file. Errors wrap ErrInvalid and read
// "<file>: <json path>: <problem>".
func Parse(data []byte, file, source string) (*Set, error) {
	bad := func(path, format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s: %s", ErrInvalid, file, path, fmt.Sprintf(format, a...))
	}
	var top map[string]json.RawMessage
	if err := strictObject(data, &top); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, file, err)
	}
	for k := range top {
		if k != "version" && k != "hooks" {
			return nil, bad(k, "unknown key")
		}
	}
	var version float64
	if raw, ok := top["version"]; !ok {
		return nil, bad("version", "required (must be 1)")
	} else if json.Unmarshal(raw, &version) != nil || version != 1 {
		return nil, bad("version", "must be 1, not %s", raw)
	}
	set := &Set{}
	raw, ok := top["hooks"]
	if !ok || isNull(raw) {
		return set, nil
	}
	var byName map[string]json.RawMessage
	if err := strictObject(raw, &byName); err != nil {
		return nil, bad("hooks", "must be an object keyed by event name")
	}
	names := make([]string, 0, len(byName))
	for k := range byName {
		if eventIndex(Event(k)) < 0 {
			return nil, bad("hooks."+k, "unknown event (known: %s)", eventList())
		}
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return eventIndex(Event(names[i])) < eventIndex(Event(names[j])) })
	for _, name := range names {
		ev := Event(name)
		var groups []json.RawMessage
		if json.Unmarshal(byName[name], &groups) != nil {
			return nil, bad("hooks."+name, "must be an array of matcher groups")
		}
		for gi, g := range groups {
			gpath := fmt.Sprintf("hooks.%s[%d]", name, gi)
			var group map[string]json.RawMessage
			if strictObject(g, &group) != nil {
				return nil, bad(gpath, "must be an object with matcher and hooks")
			}
			var matcher *Matcher
			for k, v := range group {
				switch k {
				case "matcher":
					var s string
					if json.Unmarshal(v, &s) != nil {
						return nil, bad(gpath+".matcher", "must be a string")
					}
					m, err := ParseMatcher(s)
					if err != nil {
						return nil, bad(gpath+".matcher", "%v", err)
					}
					if ev == PreToolUse || ev == PostToolUse {
						matcher = m
					}
				case "hooks":
				default:
					return nil, bad(gpath+"."+k, "unknown key")
				}
			}
			var cmds []json.RawMessage
			if raw, ok := group["hooks"]; !ok || json.Unmarshal(raw, &cmds) != nil || cmds == nil {
				return nil, bad(gpath+".hooks", "must be an array of commands")
			}
			for ci, c := range cmds {
				cpath := fmt.Sprintf("%s.hooks[%d]", gpath, ci)
				cmd, err := parseCommand(c)
				if err != nil {
					return nil, bad(cpath+err.path, "%s", err.msg)
				}
				cmd.Event, cmd.Matcher, cmd.Source, cmd.File = ev, matcher, source, file
				i := eventIndex(ev)
				set.byEvent[i] = append(set.byEvent[i], cmd)
			}
		}
	}
	return set, nil
}

type fieldErr struct{ path, msg string }

func parseCommand(raw json.RawMessage) (*Command, *fieldErr) {
	var obj map[string]json.RawMessage
	if strictObject(raw, &obj) != nil {
		return nil, &fieldErr{"", "must be an object {type, command, timeoutMs}"}
	}
	cmd := &Command{}
	for k, v := range obj {
		switch k {
		case "type":
			var t string
			if json.Unmarshal(v, &t) != nil || t != "command" {
				return nil, &fieldErr{".type", `must be "command"`}
			}
		case "command":
			if json.Unmarshal(v, &cmd.Command) != nil || strings.TrimSpace(cmd.Command) == "" {
				return nil, &fieldErr{".command", "must be a non-empty string"}
			}
		case "timeoutMs":
			if json.Unmarshal(v, &cmd.TimeoutMs) != nil || cmd.TimeoutMs <= 0 {
				return nil, &fieldErr{".timeoutMs", "must be a positive number of milliseconds"}
			}
		default:
			return nil, &fieldErr{"." + k, "unknown key"}
		}
	}
	if _, ok := obj["type"]; !ok {
		return nil, &fieldErr{".type", `required ("command")`}
	}
	if _, ok := obj["command"]; !ok {
		return nil, &fieldErr{".command", "required"}
	}
	return cmd, nil
}

func strictObject(data []byte, v *map[string]json.RawMessage) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return errors.New("must be a JSON object")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func eventList() string {
	names := make([]string, len(Events))
	for i, e := range Events {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

// Layers are the hooks files of a process.
type Layers struct {
	// User is <configDir>/hooks.json, loaded if it exists.
	User string
	// Profile is a profile's hooksFile ("" when none); it must exist.
	Profile string
	// Project is <cwd>/.ama/hooks.json; parsed only when Trusted, and read
	// so that it cannot lead out of <cwd> (ownfs.ReadIn).
	Project string
	Trusted bool
}

// Load reads the layers in flattening order (user, profile, project). It
// returns the warnings to show at startup (an untrusted project's file
// that was skipped).
func Load(l Layers) (*Set, []string, error) {
	set := &Set{}
	var warnings []string
	read := func(path, source string, mustExist bool) error {
		if path == "" {
			return nil
		}
		var data []byte
		var err error
		if source == "project" {
			data, err = ownfs.ReadIn(filepath.Dir(filepath.Dir(path)), path, ownfs.MaxConfig)
		} else {
			data, err = ownfs.ReadUser(path, ownfs.MaxConfig)
		}
		if errors.Is(err, fs.ErrNotExist) && !mustExist {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
		}
		s, err := Parse(data, path, source)
		if err != nil {
			return err
		}
		set.Append(s)
		return nil
	}
	if err := read(l.User, "user", false); err != nil {
		return nil, nil, err
	}
	if err := read(l.Profile, "profile", true); err != nil {
		return nil, nil, err
	}
	if l.Project != "" {
		if l.Trusted {
			if err := read(l.Project, "project", false); err != nil {
				return nil, nil, err
			}
		} else if _, err := os.Stat(l.Project); err == nil {
			warnings = append(warnings, "project hooks file "+l.Project+" skipped: the project is not trusted (pass --trust, or trust it in trust.json)")
		}
	}
	return set, warnings, nil
}

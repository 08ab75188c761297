package session

import (
	"errors"
	"fmt"
	"strings"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/skills"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/templates"
)

// ErrSkillNotFound: a prompt /skill:<name> names no discovered skill
// (wire code skill_not_found).
var ErrSkillNotFound = errors.New("unknown skill")

// Command is an entry of get_commands.
type Command struct {
	Name        string
	Description string
	Source      string // builtin, template, skill
	// ArgumentHint is a template's argument-hint ("" when none).
	ArgumentHint string
	// Key names the catalog sentence (internal/i18n) of a builtin's
	// Description, which is its English text; the wire layer renders it
	// in the interface language ("": Description as it is).
	Key string
}

// builtinCommands are the slash commands a prompt can carry over RPC.
var builtinCommands = []Command{
	{Name: "model", Description: "Switch the model: /model <provider>/<id>", Source: "builtin", Key: "command.builtin.model"},
	{Name: "thinking", Description: "Set the thinking level: /thinking off|minimal|low|medium|high|xhigh", Source: "builtin", Key: "command.builtin.thinking"},
	{Name: "permission", Description: "Set the permission mode: /permission plan|allowlist|default|auto-edit|auto|full-auto", Source: "builtin", Key: "command.builtin.permission"},
	{Name: "name", Description: "Name this session: /name <text>", Source: "builtin", Key: "command.builtin.name"},
}

// Commands lists the slash commands: builtins first, then templates,
// then skills.
func (s *Session) Commands() []Command {
	out := append([]Command(nil), builtinCommands...)
	for _, t := range s.deps.Templates {
		out = append(out, Command{Name: t.Name, Description: t.Description, Source: "template", ArgumentHint: t.ArgumentHint})
	}
	for _, sk := range s.deps.Skills {
		out = append(out, Command{Name: "skill:" + sk.Name, Description: sk.Description, Source: "skill"})
	}
	return out
}

// skillsSection renders the skills part of the system prompt.
func (s *Session) skillsSection() string { return skills.Section(s.deps.Skills) }

// slashCommand handles a prompt that is a builtin slash command (reply
// Handled) or expands a skill (starts a run). It reports false for
// anything else, which is then an ordinary prompt.
func (st *state) slashCommand(text string, reply func(Disposition, error)) bool {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return false
	}
	name, arg, _ := strings.Cut(t[1:], " ")
	arg = strings.TrimSpace(arg)
	handled := func(err error) bool {
		if err != nil {
			reply("", err)
		} else {
			reply(Handled, nil)
		}
		return true
	}
	switch name {
	case "model":
		provider, id, ok := llm.ParseRef(arg)
		if !ok {
			return handled(fmt.Errorf("%w: usage: /model <provider>/<id>", ErrInvalidArguments))
		}
		m, p, err := st.s.deps.Models.Find(provider, id)
		if err != nil {
			return handled(err)
		}
		st.model, st.provider = m, p
		st.appendEntry(store.ModelChangeEntry(m.Provider, m.ID, ""))
		st.s.publish(events.ModelChanged{Model: *modelRef(m)})
		return handled(nil)
	case "thinking":
		if !llm.ValidThinkingLevel(arg) {
			return handled(fmt.Errorf("%w: unknown thinking level %q", ErrInvalidArguments, arg))
		}
		if arg != st.thinkingLevel {
			st.thinkingLevel = arg
			st.appendEntry(store.ThinkingLevelEntry(arg))
			st.s.publish(events.ThinkingLevelChanged{Level: arg})
			st.pauseWarm()
		}
		return handled(nil)
	case "permission":
		m, err := parseMode(arg)
		if err != nil {
			return handled(err)
		}
		st.setMode(m)
		return handled(nil)
	case "name":
		if arg == "" {
			return handled(fmt.Errorf("%w: usage: /name <text>", ErrInvalidArguments))
		}
		st.appendEntry(store.SessionInfoEntry(arg))
		return handled(nil)
	}
	if skill, ok := strings.CutPrefix(name, "skill:"); ok {
		for _, sk := range st.s.deps.Skills {
			if sk.Name != skill {
				continue
			}
			body, err := skills.Read(sk)
			if err != nil {
				return handled(fmt.Errorf("read skill %s: %w", sk.Name, err))
			}
			prompt := fmt.Sprintf("Follow the skill %q (file %s):\n\n%s", sk.Name, sk.Location, strings.TrimSpace(string(body)))
			if arg != "" {
				prompt += "\n\n" + arg
			}
			st.startPrompt(prompt, nil, "", func() { reply(Started, nil) }, func(err error) { reply("", err) })
			return true
		}
		names := make([]string, 0, len(st.s.deps.Skills))
		for _, sk := range st.s.deps.Skills {
			names = append(names, sk.Name)
		}
		return handled(fmt.Errorf("%w: %s (available: %s)", ErrSkillNotFound, skill, strings.Join(names, ", ")))
	}
	return false
}

// expandTemplate turns a prompt "/name args" naming a discovered
// template into the template's body with the arguments substituted (the
// body is read again from disk, so edits apply at once). Any other text
// comes back unchanged. It runs after the builtins and /skill: (which a
// template name cannot shadow) and before the UserPromptSubmit hook.
func (st *state) expandTemplate(text string) (string, error) {
	name, args, ok := templates.Match(text)
	if !ok {
		return text, nil
	}
	t, ok := templates.Find(st.s.deps.Templates, name)
	if !ok {
		return text, nil
	}
	body, err := templates.Read(t)
	if err != nil {
		return "", fmt.Errorf("read template %s: %w", t.Name, err)
	}
	return templates.Expand(body, templates.SplitArgs(args)), nil
}

// Skills returns the discovered skills.
func (s *Session) Skills() []skills.Skill { return s.deps.Skills }

package app

import (
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/skills"
	"github.com/armadra/ama-rpc/templates"
)

// discoverSkills lists the skills: the built-in one, the user's, the
// project's .ama/skills when the project is trusted (like its hooks,
// agents and prompt templates: an untrusted repository's skills are text
// the model would be told to follow; one warning says they were skipped),
// then the profile's skillDirs.
func discoverSkills(paths config.Paths, cwd string, profile *Profile, trusted bool, log *zap.Logger) []skills.Skill {
	var list []skills.Skill
	if b, err := skills.Builtin(paths.Data); err == nil {
		list = append(list, b)
	} else {
		log.Warn("builtin skill", zap.Error(err))
	}
	dirs := map[string]string{"user": filepath.Join(paths.Config, "skills")}
	project := filepath.Join(cwd, ".ama", "skills")
	if trusted {
		dirs["project"] = project
	} else if fi, err := os.Stat(project); err == nil && fi.IsDir() {
		log.Warn("project skills in " + project + " are skipped: the project is not trusted (pass --trust)")
	}
	list = append(list, skills.Discover(dirs)...)
	if profile != nil {
		list = withProfileSkills(list, profile.SkillDirs)
	}
	return list
}

// discoverTemplates finds the prompt templates, first definition of a
// name winning: the profile's promptDirs (relative ones resolved against
// cwd), <configDir>/prompts, then <cwd>/.ama/prompts when the project is
// trusted (read with the project as the root its files may not leave).
// An untrusted project's directory is skipped with one warning; each
// skipped file is reported once, never fatal.
func discoverTemplates(configDir, cwd string, profile *Profile, trusted bool, log *zap.Logger) []templates.Template {
	var dirs []templates.Dir
	if profile != nil {
		for _, d := range profile.PromptDirs {
			if !filepath.IsAbs(d) {
				d = filepath.Join(cwd, d)
			}
			dirs = append(dirs, templates.Dir{Path: d, Scope: templates.ScopeProfile})
		}
	}
	dirs = append(dirs, templates.Dir{Path: filepath.Join(configDir, "prompts"), Scope: templates.ScopeUser})
	project := filepath.Join(cwd, ".ama", "prompts")
	if trusted {
		dirs = append(dirs, templates.Dir{Path: project, Scope: templates.ScopeProject, Root: cwd})
	} else if fi, err := os.Stat(project); err == nil && fi.IsDir() {
		log.Warn("project prompt templates in " + project + " are skipped: the project is not trusted (pass --trust)")
	}
	list, warnings := templates.Discover(dirs)
	for _, w := range warnings {
		log.Warn("prompt template: " + w)
	}
	return list
}

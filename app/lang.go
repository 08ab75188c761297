package app

import (
	"strings"

	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/internal/i18n"
)

// The interface language is resolved here and only here (internal/i18n
// holds the order). It is fixed twice at startup: earlyLang, before any
// output, from AMA_LANG, --lang (peeked from the raw arguments), the user
// config's ui.language read leniently (unreadable or invalid: unset) and
// the locale variables; wiredLang, once the profile and the project config
// are loaded, adds the profile's language and the project's ui.language
// (AMA_LANG and --lang still win). Nothing switches it afterwards.

// peekLang finds --lang/-lang VALUE or --lang=VALUE before `--` (the
// last one, as the flag package takes it). A value that is not zh or en
// is left for parseFlags to refuse (exit 2).
func peekLang(args []string) i18n.Lang {
	var v string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		switch {
		case a == "--lang" || a == "-lang":
			if i+1 < len(args) {
				i++
				v = args[i]
			}
		case strings.HasPrefix(a, "--lang="), strings.HasPrefix(a, "-lang="):
			v = a[strings.Index(a, "=")+1:]
		}
	}
	l, _ := i18n.ParseExact(v)
	return l
}

// configLang is ui.language of c as a language ("" for auto or unset).
func configLang(c *config.Config) i18n.Lang {
	if c == nil {
		return ""
	}
	l, _ := i18n.ParseExact(c.UI.Language)
	return l
}

// earlyLang is the language of CLI usage errors and --help.
func earlyLang(env Env) i18n.Lang {
	var user *config.Config
	if paths, err := config.ResolvePaths(env.Getenv); err == nil {
		user, _ = config.Load(paths.UserFile()) // lenient: an unreadable or invalid file is reported later
	}
	l, _ := i18n.Resolve(i18n.Inputs{Getenv: env.Getenv, Flag: peekLang(env.Args), Config: configLang(user)})
	return l
}

// wiredLang is the language of the served session's human-readable texts.
func wiredLang(env Env, flags *Flags, p *Profile, user, project *config.Config) i18n.Lang {
	in := i18n.Inputs{Getenv: env.Getenv, Config: configLang(user)}
	in.Flag, _ = i18n.ParseExact(flags.Lang)
	if p != nil {
		in.Profile, _ = i18n.ParseExact(p.Language)
	}
	if l := configLang(project); l != "" {
		in.Config = l // project overrides user, as in the merge
	}
	l, _ := i18n.Resolve(in)
	return l
}

// startupLang is wiredLang for a start-up that stopped before the wiring
// was built (ACP served without a model): the same sources read again,
// leniently (an unreadable profile or config is left out; the start-up
// reported it).
func startupLang(env Env, flags *Flags, cwd string) i18n.Lang {
	paths, err := config.ResolvePaths(env.Getenv)
	if err != nil {
		return earlyLang(env)
	}
	var profile *Profile
	if flags.Profile != "" {
		profile, _ = loadProfile(flags.Profile, env.Cwd)
	}
	user, _ := loadUserConfig(paths.UserFile(), profile)
	project, _ := config.LoadIn(cwd, config.ProjectFile(cwd))
	return wiredLang(env, flags, profile, user, project)
}

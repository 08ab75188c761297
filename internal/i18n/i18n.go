package i18n

import (
	"fmt"
	"strings"
)

// Lang is an interface language.
type Lang string

// The interface languages. English is the default and the shape source of
// the catalog.
const (
	En Lang = "en"
	Zh Lang = "zh"
)

// Langs lists the languages, English first.
var Langs = []Lang{En, Zh}

// ParsePrefix reads a lenient value (AMA_LANG, a locale variable): after
// trimming, anything starting with zh or en case-insensitively (zh_CN,
// en-US.UTF-8).
func ParsePrefix(s string) (Lang, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasPrefix(s, "zh"):
		return Zh, true
	case strings.HasPrefix(s, "en"):
		return En, true
	}
	return "", false
}

// ParseExact reads a strict value (--lang, profile language, ui.language):
// exactly zh or en.
func ParseExact(s string) (Lang, bool) {
	switch Lang(s) {
	case En, Zh:
		return Lang(s), true
	}
	return "", false
}

// Source names where the language came from (for diagnostics).
type Source string

// The sources, highest priority first.
const (
	SourceEnv     Source = "env AMA_LANG"
	SourceFlag    Source = "--lang"
	SourceProfile Source = "profile"
	SourceConfig  Source = "config ui.language"
	SourceLocale  Source = "locale"
	SourceDefault Source = "default"
)

// Inputs are the settings the language is resolved from. Flag, Profile
// and Config are already validated (empty: unset; config "auto" is unset).
type Inputs struct {
	Getenv  func(string) string
	Flag    Lang
	Profile Lang
	Config  Lang
}

// Resolve picks the interface language: AMA_LANG (an invalid value falls
// through), --lang, the profile, ui.language, the first non-empty of
// LC_ALL, LC_MESSAGES, LANG (zh… is zh, any other value en), English.
func Resolve(in Inputs) (Lang, Source) {
	getenv := in.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if l, ok := ParsePrefix(getenv("AMA_LANG")); ok {
		return l, SourceEnv
	}
	switch {
	case in.Flag != "":
		return in.Flag, SourceFlag
	case in.Profile != "":
		return in.Profile, SourceProfile
	case in.Config != "":
		return in.Config, SourceConfig
	}
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if s := getenv(v); s != "" {
			if l, _ := ParsePrefix(s); l == Zh {
				return Zh, SourceLocale
			}
			return En, SourceLocale // C, POSIX, en_US, fr_FR, …: later variables are not consulted
		}
	}
	return En, SourceDefault
}

// T renders key in lang with fmt verbs filled from args. An unknown
// language renders English; a key missing from the catalog renders the
// key itself (TestCatalogComplete keeps both from happening).
func T(lang Lang, key Key, args ...any) string {
	tmpl, ok := catalog[lang][key]
	if !ok {
		tmpl, ok = catalog[En][key]
	}
	if !ok {
		return string(key)
	}
	if len(args) == 0 {
		return tmpl
	}
	return fmt.Sprintf(tmpl, args...)
}

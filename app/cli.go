package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/armadra/ama-rpc/internal/i18n"
)

// The command line's texts for people, in the interface language: the
// flag list of --help and -h, the flag package's parse errors, and the
// global flags that may come before a subcommand.

// printDefaults is flag.FlagSet.PrintDefaults with the "(default …)"
// suffix from the catalog: the flag package writes it in English. The
// layout is the flag package's (TestPrintDefaultsLikeFlagPackage keeps the
// English output byte-identical to it).
func printDefaults(w io.Writer, fs *flag.FlagSet, lang i18n.Lang) {
	fs.VisitAll(func(f *flag.Flag) {
		var b strings.Builder
		fmt.Fprintf(&b, "  -%s", f.Name)
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			b.WriteString(" ")
			b.WriteString(name)
		}
		if b.Len() <= 4 { // a one-letter boolean flag: usage on the same line
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if !zeroDefault(f) {
			key := i18n.CLIFlagDefault
			if g, ok := f.Value.(flag.Getter); ok {
				if _, str := g.Get().(string); str {
					key = i18n.CLIFlagDefaultStr
				}
			}
			b.WriteString(i18n.T(lang, key, f.DefValue))
		}
		fmt.Fprint(w, b.String(), "\n")
	})
}

// zeroDefault reports a default the flag package leaves unsaid: the zero
// value of the flag's type (our flags are strings, booleans, numbers and
// lists).
func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "false", "0", "[]":
		return true
	}
	return false
}

// The flag package's parse errors (flag/flag.go failf), matched by their
// English text: the package has no typed errors.
var flagErrors = []struct {
	re     *regexp.Regexp
	key    i18n.Key
	quoted bool // the first group is a %q-quoted value
}{
	{regexp.MustCompile(`^flag provided but not defined: -(.*)$`), i18n.CLIFlagUndefined, false},
	{regexp.MustCompile(`^flag needs an argument: -(.*)$`), i18n.CLIFlagNeedsValue, false},
	{regexp.MustCompile(`^bad flag syntax: (.*)$`), i18n.CLIFlagBadSyntax, false},
	{regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -(\S+): (.*)$`), i18n.CLIFlagBadValue, true},
	{regexp.MustCompile(`^invalid boolean value ("(?:[^"\\]|\\.)*") for -(\S+): (.*)$`), i18n.CLIFlagBadBool, true},
}

// flagError renders a parse error of the flag package in lang (the value
// and the strconv detail stay as they are). Any other error is returned
// unchanged.
func flagError(err error, lang i18n.Lang) error {
	if err == nil || lang == i18n.En || lang == "" {
		return err
	}
	for _, fe := range flagErrors {
		m := fe.re.FindStringSubmatch(err.Error())
		if m == nil {
			continue
		}
		args := make([]any, len(m)-1)
		for i, g := range m[1:] {
			args[i] = g
		}
		if fe.quoted {
			v, uerr := strconv.Unquote(m[1])
			if uerr != nil {
				return err
			}
			args[0] = v
		}
		return errors.New(i18n.T(lang, fe.key, args...))
	}
	return err
}

// leadingLang takes the global --lang flags off the front of args (ama:
// `ama --lang en doctor`): --lang VALUE, --lang=VALUE and the one-dash
// forms. It returns the rest and an error (in lang) for a --lang without
// a value or with another value than zh or en (the language itself was
// already taken by earlyLang).
func leadingLang(args []string, lang i18n.Lang) (rest []string, err error) {
	var value string
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--lang" || a == "-lang":
			if len(args) < 2 {
				return nil, errors.New(i18n.T(lang, i18n.CLIFlagNeedsValue, "lang"))
			}
			value, args = args[1], args[2:]
		case strings.HasPrefix(a, "--lang="), strings.HasPrefix(a, "-lang="):
			value, args = a[strings.IndexByte(a, '=')+1:], args[1:]
		default:
			return args, checkLang(value, lang)
		}
	}
	return args, checkLang(value, lang)
}

// checkLang refuses a --lang value other than zh or en ("": not given).
func checkLang(v string, lang i18n.Lang) error {
	if _, ok := i18n.ParseExact(v); v != "" && !ok {
		return errors.New(i18n.T(lang, i18n.CLIBadLang, v))
	}
	return nil
}

// subFlags is a subcommand's flag set: its own flags plus the global
// --lang, the help sentences from the catalog (set names the catalog's
// flag group) and -h printed in lang.
type subFlags struct {
	*flag.FlagSet
	set, title string
	usage      func() string // the usage lines above the flags
	lang       i18n.Lang
	out        io.Writer
	langValue  string
}

func newSubFlags(env Env, lang i18n.Lang, set, title string, usage func() string) *subFlags {
	s := &subFlags{FlagSet: flag.NewFlagSet(title, flag.ContinueOnError), set: set, title: title, usage: usage, lang: lang, out: env.Stderr}
	s.SetOutput(io.Discard)
	s.StringVar(&s.langValue, "lang", "", i18n.T(lang, i18n.CLIHelpLang))
	return s
}

// help is the catalog's help sentence of one of the set's flags.
func (s *subFlags) help(name string, args ...any) string {
	return i18n.T(s.lang, i18n.FlagKey(s.set, name), args...)
}

// printHelp writes the usage lines and the flags.
func (s *subFlags) printHelp() {
	if s.usage != nil {
		fmt.Fprintln(s.out, s.usage())
	} else {
		fmt.Fprintln(s.out, i18n.T(s.lang, i18n.CLIUsageOf, s.title))
	}
	printDefaults(s.out, s.FlagSet, s.lang)
}

// parse parses args. It reports the exit code and false when the caller
// must stop: -h (0, after the help), a parse error (2, after the error
// line and the help, as the flag package writes them) or a bad --lang (2).
func (s *subFlags) parse(args []string) (int, bool) {
	if err := s.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			s.printHelp()
			return ExitOK, false
		}
		fmt.Fprintln(s.out, flagError(err, s.lang))
		s.printHelp()
		return ExitUsage, false
	}
	if err := checkLang(s.langValue, s.lang); err != nil {
		fmt.Fprintln(s.out, i18n.T(s.lang, i18n.CLISubError, s.title, err))
		return ExitUsage, false
	}
	return 0, true
}

package app

import (
	"bytes"
	"flag"
	"strings"
	"testing"
	"unicode"

	"github.com/armadra/ama-rpc/internal/i18n"
)

func han(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
}

// --lang is a global flag: before a subcommand's name, among its flags,
// with the server's flags; in each spelling; AMA_LANG still wins; a bad
// value or a missing one is a usage error (spec i18n.md checklist 2).
func TestLangArgumentOrders(t *testing.T) {
	type want struct {
		code int
		zh   bool   // the output is Chinese (else English, no CJK)
		has  string // the output contains this
	}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		stdin string
		want  want
	}{
		{"before explain", nil, []string{"--lang", "zh", "explain", "-h"}, "", want{0, true, "用法：ama-rpc explain"}},
		{"before explain, =", nil, []string{"--lang=zh", "explain", "-h"}, "", want{0, true, "用法：ama-rpc explain"}},
		{"before explain, one dash", nil, []string{"-lang", "zh", "explain", "-h"}, "", want{0, true, "无人可以答复"}},
		{"after explain", nil, []string{"explain", "--lang", "zh", "-h"}, "", want{0, true, "用法：ama-rpc explain"}},
		{"en before explain beats LANG", map[string]string{"LANG": "zh_CN.UTF-8"}, []string{"--lang", "en", "explain", "-h"}, "", want{0, false, "usage: ama-rpc explain"}},
		{"LANG alone", map[string]string{"LANG": "zh_CN.UTF-8"}, []string{"explain", "-h"}, "", want{0, true, "用法：ama-rpc explain"}},
		{"AMA_LANG beats a leading --lang", map[string]string{"AMA_LANG": "en"}, []string{"--lang", "zh", "explain", "-h"}, "", want{0, false, "usage: ama-rpc explain"}},
		{"explain runs after --lang", nil, []string{"--lang", "zh", "explain"}, `{"tool":"read","input":{"path":"a.txt"}}` + "\n", want{0, false, `"decision":"allow"`}},
		{"explain bad flag in zh", nil, []string{"--lang", "zh", "explain", "-x"}, "", want{2, true, "未定义的参数：-x"}},
		{"before sessions", nil, []string{"--lang", "zh", "sessions", "list", "-h"}, "", want{0, true, "列出这个目录的会话"}},
		{"between sessions and list", nil, []string{"sessions", "--lang", "zh", "list", "-h"}, "", want{0, true, "列出这个目录的会话"}},
		{"after sessions list", nil, []string{"sessions", "list", "--lang", "zh", "-h"}, "", want{0, true, "列出这个目录的会话"}},
		{"sessions usage in zh", nil, []string{"--lang", "zh", "sessions"}, "", want{2, true, "用法：ama-rpc sessions list"}},
		{"before schema", nil, []string{"--lang", "zh", "schema", "-h"}, "", want{0, true, "打印 rpc 协议输出行的 JSON Schema"}},
		{"schema extra argument in zh", nil, []string{"--lang", "zh", "schema", "x"}, "", want{2, true, `多余的参数 "x"`}},
		{"before help", nil, []string{"--lang", "zh", "help"}, "", want{0, true, "退出码："}},
		{"twice, the last wins", nil, []string{"--lang", "en", "--lang", "zh", "help"}, "", want{0, true, "退出码："}},
		{"with server flags", nil, []string{"--model", "fake/echo", "--lang", "zh", "--mode", "nope"}, "", want{2, true, "--mode 只能是 rpc 或 acp"}},
		{"server flags after it", nil, []string{"--lang", "zh", "--help"}, "", want{0, true, "参数："}},
		{"bad value before a subcommand", nil, []string{"--lang", "fr", "explain"}, "", want{2, false, `--lang must be zh or en, not "fr"`}},
		{"bad value after a subcommand", nil, []string{"explain", "--lang", "fr"}, "", want{2, false, `--lang must be zh or en, not "fr"`}},
		{"no value", nil, []string{"--lang"}, "", want{2, false, "flag needs an argument: -lang"}},
		{"print usage reason in zh", nil, []string{"--lang", "zh", "--max-turns", "2"}, "", want{2, true, "--max-turns 需要 -p"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			env := map[string]string{"HOME": home}
			for k, v := range tc.env {
				env[k] = v
			}
			var out, errb bytes.Buffer
			code := Main(t.Context(), Env{Args: tc.args, Stdin: strings.NewReader(tc.stdin), Stdout: &out, Stderr: &errb,
				Getenv: func(k string) string { return env[k] }, Cwd: t.TempDir()})
			all := out.String() + errb.String()
			if code != tc.want.code || !strings.Contains(all, tc.want.has) {
				t.Fatalf("exit %d (want %d); output lacks %q:\n%s", code, tc.want.code, tc.want.has, all)
			}
			if tc.want.zh != han(all) && !strings.Contains(tc.want.has, "decision") {
				t.Errorf("Chinese output %v, want %v:\n%s", han(all), tc.want.zh, all)
			}
		})
	}
}

// The flag list of --help keeps the flag package's layout to the byte in
// English: printDefaults only replaces its "(default …)" words.
func TestPrintDefaultsLikeFlagPackage(t *testing.T) {
	var got, want bytes.Buffer
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var m multiFlag
	fs.String("mode", "rpc", "protocol")
	fs.String("empty", "", "no default")
	fs.Bool("c", false, "short")
	fs.Bool("on", true, "true by default")
	fs.Int("n", 0, "a number")
	fs.Int("k", 3, "a number with a default")
	fs.Float64("cost", 0, "a float")
	fs.Var(&m, "rule", "repeatable\nsecond line")
	fs.String("quoted", "a b", "a `path` with a name")
	fs.SetOutput(&want)
	fs.PrintDefaults()
	printDefaults(&got, fs, i18n.En)
	if got.String() != want.String() {
		t.Errorf("printDefaults:\n%s\nflag package:\n%s", got.String(), want.String())
	}
	// And the real flag set of the server: the same bytes as the flag
	// package prints for it.
	got.Reset()
	want.Reset()
	if _, err := parseFlags([]string{"--help"}, &got, i18n.En); err != flag.ErrHelp {
		t.Fatal(err)
	}
	if !strings.Contains(got.String(), "  -mode string\n    \tprotocol: rpc (stdio JSONL) or acp (Agent Client Protocol) (default \"rpc\")\n") {
		t.Errorf("--help:\n%s", got.String())
	}
}

// Every flag of every flag set has its help sentence in both languages
// (the keys are built from the flag's name, so TestCatalogComplete cannot
// see a missing one).
func TestFlagHelpInCatalog(t *testing.T) {
	for _, lang := range i18n.Langs {
		var b bytes.Buffer
		_, _ = parseFlags([]string{"--help"}, &b, lang)
		for _, set := range []string{"explain", "sessions", "schema"} {
			var errb bytes.Buffer
			env := Env{Stderr: &errb, Stdout: &errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
			switch set {
			case "explain":
				runExplain(env, []string{"-h"}, lang)
			case "sessions":
				runSessions(env, []string{"list", "-h"}, lang)
			case "schema":
				runSchema(env, []string{"-h"}, lang)
			}
			if errb.Len() == 0 || strings.Contains(errb.String(), "cli."+set+".flag.") {
				t.Errorf("%s %s: no help, or a flag without its catalog sentence:\n%s", lang, set, errb.String())
			}
		}
		if strings.Contains(b.String(), "cli.main.flag.") {
			t.Errorf("%s: a server flag without its catalog sentence:\n%s", lang, b.String())
		}
	}
}

// The flag package's errors read in Chinese under zh; anything else is
// left as it is.
func TestFlagError(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	fs.Int("n", 0, "")
	fs.Bool("b", false, "")
	for _, tc := range []struct {
		args []string
		zh   string
	}{
		{[]string{"-nope"}, "未定义的参数：-nope"},
		{[]string{"-n"}, "参数需要一个值：-n"},
		{[]string{"-n", "x"}, `值 "x" 对参数 -n 无效：parse error`},
		{[]string{"-b=maybe"}, `布尔值 "maybe" 对参数 -b 无效：parse error`},
		{[]string{"---x"}, "参数语法错误：---x"},
	} {
		err := fs.Parse(tc.args)
		if err == nil {
			t.Fatalf("%v parsed", tc.args)
		}
		if got := flagError(err, i18n.En); got != err {
			t.Errorf("en changed %v", err)
		}
		if got := flagError(err, i18n.Zh).Error(); got != tc.zh {
			t.Errorf("%v: zh %q, want %q (en %q)", tc.args, got, tc.zh, err)
		}
	}
}

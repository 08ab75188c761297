package i18n

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

var verb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

// TestCatalogComplete fails when a key is missing in one language, when
// the two languages disagree on the fmt verbs of a key (count, kind and
// order), when English contains CJK text or Chinese is empty.
func TestCatalogComplete(t *testing.T) {
	for _, l := range Langs {
		if catalog[l] == nil {
			t.Fatalf("no catalog for %s", l)
		}
	}
	for _, l := range Langs {
		for _, o := range Langs {
			for k := range catalog[l] {
				if _, ok := catalog[o][k]; !ok {
					t.Errorf("key %s exists in %s but not in %s", k, l, o)
				}
			}
		}
	}
	for k, en := range catalog[En] {
		zh := catalog[Zh][k]
		if ev, zv := verb.FindAllString(en, -1), verb.FindAllString(zh, -1); !slices.Equal(ev, zv) {
			t.Errorf("%s: placeholders differ: en %v, zh %v", k, ev, zv)
		}
		if strings.IndexFunc(en, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0 {
			t.Errorf("%s: CJK in the English text %q", k, en)
		}
		if strings.TrimSpace(zh) == "" || strings.Contains(zh, "TODO") {
			t.Errorf("%s: Chinese text %q", k, zh)
		}
	}
}

// The check itself can fail: a catalog with a missing key and a verb
// mismatch is caught by the same predicates.
func TestVerbCheckCatches(t *testing.T) {
	if slices.Equal(verb.FindAllString("unknown command: %s", -1), verb.FindAllString("未知命令：%d", -1)) {
		t.Fatal("verb mismatch not detected")
	}
	if slices.Equal(verb.FindAllString("a %s %d", -1), verb.FindAllString("%d %s", -1)) {
		t.Fatal("verb order not detected")
	}
}

func TestT(t *testing.T) {
	if got := T(En, RPCUnknownCommand, "no_such"); got != "unknown command: no_such" {
		t.Errorf("en: %q", got)
	}
	if got := T(Zh, RPCUnknownCommand, "no_such"); got != "未知命令：no_such" {
		t.Errorf("zh: %q", got)
	}
	if got := T("fr", RPCBusy); got != "session is busy" {
		t.Errorf("unknown language: %q", got)
	}
}

// The spec's conformance checklist items 1, 3 and 4 (language choice).
func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		in   Inputs
		want Lang
		src  Source
	}{
		{"env beats flag", map[string]string{"AMA_LANG": "zh"}, Inputs{Flag: En}, Zh, SourceEnv},
		{"flag alone", nil, Inputs{Flag: En}, En, SourceFlag},
		{"env lenient zh_CN", map[string]string{"AMA_LANG": " ZH_cn "}, Inputs{}, Zh, SourceEnv},
		{"invalid env falls through to locale", map[string]string{"AMA_LANG": "fr", "LANG": "zh_CN.UTF-8"}, Inputs{}, Zh, SourceLocale},
		{"nothing", nil, Inputs{}, En, SourceDefault},
		{"LANG zh", map[string]string{"LANG": "zh_CN.UTF-8"}, Inputs{}, Zh, SourceLocale},
		{"first non-empty wins", map[string]string{"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, Inputs{}, En, SourceLocale},
		{"LC_MESSAGES before LANG", map[string]string{"LC_MESSAGES": "zh_TW", "LANG": "en_US"}, Inputs{}, Zh, SourceLocale},
		{"config beats locale", map[string]string{"LANG": "en_US.UTF-8"}, Inputs{Config: Zh}, Zh, SourceConfig},
		{"profile beats config", nil, Inputs{Profile: En, Config: Zh}, En, SourceProfile},
		{"flag beats profile", nil, Inputs{Flag: Zh, Profile: En}, Zh, SourceFlag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Getenv = func(k string) string { return tc.env[k] }
			l, s := Resolve(tc.in)
			if l != tc.want || s != tc.src {
				t.Errorf("got %s (%s), want %s (%s)", l, s, tc.want, tc.src)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, s := range []string{"zh", "en"} {
		if _, ok := ParseExact(s); !ok {
			t.Errorf("ParseExact(%q) refused", s)
		}
	}
	for _, s := range []string{"fr", "auto", "ZH", "zh_CN", ""} {
		if _, ok := ParseExact(s); ok {
			t.Errorf("ParseExact(%q) accepted", s)
		}
	}
	if l, ok := ParsePrefix("en-US"); !ok || l != En {
		t.Errorf("ParsePrefix(en-US) = %s %v", l, ok)
	}
}

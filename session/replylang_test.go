package session

import "testing"

// ui.replyLanguage's rule: ama's English sentence, the value trimmed and
// on one line; blank is no rule.
func TestReplyLanguageRule(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"   ":                 "",
		"\n\t":                "",
		"Chinese":             "Reply to the user in Chinese.",
		"  Chinese  ":         "Reply to the user in Chinese.",
		"Simplified\nChinese": "Reply to the user in Simplified Chinese.",
		"中文":                  "Reply to the user in 中文.",
	} {
		if got := replyLanguageRule(in); got != want {
			t.Errorf("replyLanguageRule(%q) = %q, want %q", in, got, want)
		}
	}
}

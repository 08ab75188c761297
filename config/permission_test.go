package config

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// The permission section's limits (seed 004): 256 entries per list and
// 64 KiB in all; beyond, the file is a configuration error (exit 3).
func TestPermissionLimits(t *testing.T) {
	list := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = strconv.Quote("bash(echo " + strconv.Itoa(i) + ")")
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	big := strconv.Quote(strings.Repeat("x", 700))
	bigList := "[" + strings.TrimSuffix(strings.Repeat(big+",", 100), ",") + "]"
	for _, tc := range []struct {
		name, text string
		ok         bool
	}{
		{"256 deny rules", `{"permission":{"deny":` + list(256) + `}}`, true},
		{"257 deny rules", `{"permission":{"deny":` + list(257) + `}}`, false},
		{"257 ask rules", `{"permission":{"ask":` + list(257) + `}}`, false},
		{"257 hard_deny entries", `{"permission":{"classifierLists":{"hard_deny":` + list(257) + `}}}`, false},
		{"257 candidate deny rules", `{"permission":{"candidate":{"deny":` + list(257) + `}}}`, false},
		{"over 64 KiB", `{"permission":{"classifierLists":{"environment":` + bigList + `}}}`, false},
		{"lists and limits", `{"permission":{"gate":"shadow","logPath":"/tmp/p.log","classifierReasoningLevel":"low","fastClassifierMaxTokens":1024,` +
			`"classifierLists":{"environment":["Source control: git.example.com"],"soft_deny":["$defaults"]},"candidate":{"mode":"default","ask":["bash(git push *)"]}}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.json", []byte(tc.text))
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
				t.Errorf("err %v, want ok %v", err, tc.ok)
			}
		})
	}
}

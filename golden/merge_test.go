package golden_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

func TestMergeDeltas(t *testing.T) {
	d := func(typ string, idx int, delta, usage string) string {
		l := `{"type":"message_update","assistantMessageEvent":{"type":"` + typ + `","contentIndex":` + string(rune('0'+idx)) + `,"delta":"` + delta + `"}`
		if usage != "" {
			l += `,"usage":{"output":` + usage + `}`
		}
		return l + "}"
	}
	end := `{"type":"message_update","assistantMessageEvent":{"type":"text_end","contentIndex":0}}`
	cases := []struct {
		name     string
		in, want []string
	}{
		{"joins a run, keeps the later usage",
			[]string{d("text_delta", 0, "ab", "1"), d("text_delta", 0, "c\\u00e9", "2"), end},
			[]string{d("text_delta", 0, "abcé", "2"), end}},
		{"not across an index", []string{d("text_delta", 0, "a", ""), d("text_delta", 1, "b", "")},
			[]string{d("text_delta", 0, "a", ""), d("text_delta", 1, "b", "")}},
		{"not across kinds", []string{d("thinking_delta", 0, "a", ""), d("text_delta", 0, "b", "")},
			[]string{d("thinking_delta", 0, "a", ""), d("text_delta", 0, "b", "")}},
		{"not when only one has usage", []string{d("text_delta", 0, "a", ""), d("text_delta", 0, "b", "1")},
			[]string{d("text_delta", 0, "a", ""), d("text_delta", 0, "b", "1")}},
		{"not across another line", []string{d("text_delta", 0, "a", ""), end, d("text_delta", 0, "b", "")},
			[]string{d("text_delta", 0, "a", ""), end, d("text_delta", 0, "b", "")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(golden.MergeTranscript([]byte(strings.Join(c.in, "\n") + "\n")))
			want := strings.Join(c.want, "\n") + "\n"
			if got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

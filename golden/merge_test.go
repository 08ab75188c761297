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
	ch := func(sid, kind, text string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"` + kind + `","content":{"type":"text","text":"` + text + `"}}}}`
	}
	end := `{"type":"message_update","assistantMessageEvent":{"type":"text_end","contentIndex":0}}`
	up := func(tool, id, partial string) string {
		return `{"type":"tool_execution_update","toolCallId":"` + id + `","toolName":"` + tool + `","partial":"` + partial + `"}`
	}
	nested := `{"type":"tool_execution_update","toolCallId":"c1","toolName":"bash","partial":"x","parentToolCallId":"p1"}`
	toolEnd := `{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash"}`
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
		{"ACP chunks of one session and kind join",
			[]string{ch("s1", "agent_message_chunk", "he"), ch("s1", "agent_message_chunk", "llo"), ch("s1", "agent_thought_chunk", "t"),
				ch("s2", "agent_thought_chunk", "u"), ch("s2", "agent_thought_chunk", "v"), end, ch("s2", "agent_thought_chunk", "w")},
			[]string{ch("s1", "agent_message_chunk", "hello"), ch("s1", "agent_thought_chunk", "t"),
				ch("s2", "agent_thought_chunk", "uv"), end, ch("s2", "agent_thought_chunk", "w")}},
		{"a bash call's snapshots collapse to the last",
			[]string{up("bash", "c1", "/w\\n"), up("bash", "c1", "/w\\na\\nb\\n"), up("bash", "c1", "/w\\na\\nb\\n"), toolEnd},
			[]string{up("bash", "c1", "/w\\na\\nb\\n"), toolEnd}},
		{"snapshots of different calls stay",
			[]string{up("bash", "c1", "a"), up("bash", "c2", "b"), nested, up("bash", "c1", "c")},
			[]string{up("bash", "c1", "a"), up("bash", "c2", "b"), nested, up("bash", "c1", "c")}},
		{"nested snapshots collapse per parent", []string{nested, nested}, []string{nested}},
		{"snapshots not across another line", []string{up("bash", "c1", "a"), toolEnd, up("bash", "c1", "b")},
			[]string{up("bash", "c1", "a"), toolEnd, up("bash", "c1", "b")}},
		{"other tools' progress is kept line by line (event driven)",
			[]string{up("task", "c1", "[task] read"), up("task", "c1", "[task] bash"), up("canvas_run", "c2", "a"), up("canvas_run", "c2", "b")},
			[]string{up("task", "c1", "[task] read"), up("task", "c1", "[task] bash"), up("canvas_run", "c2", "a"), up("canvas_run", "c2", "b")}},
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

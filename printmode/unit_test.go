package printmode

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// Every combination of facts maps to one outcome and exit code, in ama's
// precedence; a denied call never exits 0.
func TestDecide(t *testing.T) {
	thrown := errors.New("prompt_blocked")
	cases := []struct {
		name string
		f    Facts
		out  Outcome
		code int
	}{
		{"success", Facts{LastStop: "stop"}, Completed, 0},
		{"no run (slash command)", Facts{}, Completed, 0},
		{"denied", Facts{LastStop: "stop", Denials: 1}, Denied, 7},
		{"budget", Facts{LastStop: "toolUse", Limit: true}, LimitReached, 8},
		{"budget over denied", Facts{Limit: true, Denials: 2}, LimitReached, 8},
		{"plan", Facts{LastStop: "stop", Plan: true}, PlanPending, 9},
		{"plan over denied", Facts{Plan: true, Denials: 1}, PlanPending, 9},
		{"budget over plan", Facts{Plan: true, Limit: true}, LimitReached, 8},
		{"model error", Facts{LastStop: "error"}, Failed, 1},
		{"model error over denied and plan", Facts{LastStop: "error", Denials: 1, Plan: true}, Failed, 1},
		{"aborted reply", Facts{LastStop: "aborted"}, Aborted, 1},
		{"thrown", Facts{Thrown: thrown}, Failed, 1},
		{"thrown over budget", Facts{Thrown: thrown, Limit: true}, Failed, 1},
		{"SIGINT", Facts{Signal: 130, Denials: 1, Limit: true}, Aborted, 130},
		{"SIGTERM", Facts{Signal: 143, Thrown: thrown}, Aborted, 143},
		{"signal over broken", Facts{Signal: 143, Broken: true}, Aborted, 143},
		{"stdout closed", Facts{Broken: true, LastStop: "aborted"}, Aborted, 0},
		{"stdout closed after a denial", Facts{Broken: true, Denials: 1}, Aborted, 7},
	}
	for _, tc := range cases {
		out, code := Decide(tc.f)
		if out != tc.out || code != tc.code {
			t.Errorf("%s: %s %d, want %s %d", tc.name, out, code, tc.out, tc.code)
		}
		if tc.f.Denials > 0 && code == 0 {
			t.Errorf("%s: a denied call exits 0", tc.name)
		}
	}
}

func TestFinalText(t *testing.T) {
	msg := func(text, stop string) *llm.AssistantMessage {
		return &llm.AssistantMessage{Content: []llm.Content{llm.Text(text)}, StopReason: stop}
	}
	cases := []struct {
		m    *llm.AssistantMessage
		want string
	}{
		{nil, ""},
		{msg("hi", "stop"), "hi\n"},
		{msg("hi\n", "stop"), "hi\n"},
		{msg("\n\n  indented\nnext", "stop"), "  indented\nnext\n"},
		{msg("\n \n", "stop"), ""},
		{msg("partial", "error"), ""},
		{msg("cut short", "aborted"), "cut short\n"},
	}
	for _, tc := range cases {
		if got := finalText(tc.m); got != tc.want {
			t.Errorf("finalText(%v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

func TestReadPrompt(t *testing.T) {
	env := func(k string) string { return map[string]string{"AMA_STDIN_WAIT_MS": "30"}[k] }
	var stderr strings.Builder
	cases := []struct {
		words []string
		stdin io.Reader
		no    bool
		want  string
		err   error
	}{
		{[]string{"a", "b"}, nil, false, "a b", nil},
		{[]string{"q"}, strings.NewReader("from stdin\n\n"), false, "q\n\nfrom stdin", nil},
		{[]string{"q", "-"}, strings.NewReader("x"), false, "q\n\nx", nil},
		{nil, strings.NewReader("  only  \n"), false, "  only", nil},
		{[]string{"q"}, strings.NewReader("ignored"), true, "q", nil},
		{nil, strings.NewReader(" \n"), false, "", ErrNoPrompt},
		{[]string{"-"}, strings.NewReader(""), false, "", ErrNoPrompt},
	}
	for _, tc := range cases {
		got, err := ReadPrompt(PromptInput{Words: tc.words, Stdin: tc.stdin, NoStdin: tc.no, Getenv: env, Stderr: &stderr})
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%q: %q %v, want %q %v", tc.words, got, err, tc.want, tc.err)
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %q", stderr.String())
	}
	// A pipe that stays silent is given up after AMA_STDIN_WAIT_MS.
	r, w := io.Pipe()
	defer w.Close()
	got, err := ReadPrompt(PromptInput{Words: []string{"hi"}, Stdin: r, Getenv: env, Stderr: &stderr})
	if got != "hi" || err != nil || !strings.Contains(stderr.String(), "no piped input within 30 ms") {
		t.Errorf("silent pipe: %q %v, stderr %q", got, err, stderr.String())
	}
	// A slow writer is read to its end once the first byte came in time;
	// a long wait for "-" gets the hint line once.
	stderr.Reset()
	r2, w2 := io.Pipe()
	go func() {
		_, _ = w2.Write([]byte("slow "))
		time.Sleep(50 * time.Millisecond) // the writer's pace, not a wait for an event
		_, _ = w2.Write([]byte("tail\n"))
		_ = w2.Close()
	}()
	got, err = ReadPrompt(PromptInput{Words: []string{"hi", "-"}, Stdin: r2, Getenv: env, Stderr: &stderr, HintAfter: time.Millisecond})
	if got != "hi\n\nslow tail" || err != nil || strings.Count(stderr.String(), "waiting for stdin") != 1 {
		t.Errorf("slow pipe: %q %v, stderr %q", got, err, stderr.String())
	}
}

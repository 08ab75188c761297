package printmode

import (
	"errors"
	"strings"
	"testing"
	"unicode"
)

// FuzzReadPrompt: any words and stdin give either ErrNoPrompt or a prompt
// that starts with the words (without "-") and ends with the trimmed stdin.
func FuzzReadPrompt(f *testing.F) {
	f.Add("question", "piped text\n")
	f.Add("-", "")
	f.Add("a b -", " x \n")
	f.Add("", "\u2028\n")
	f.Fuzz(func(t *testing.T, words, stdin string) {
		ws := strings.Fields(words)
		got, err := ReadPrompt(PromptInput{Words: ws, Stdin: strings.NewReader(stdin), Getenv: func(string) string { return "" }, Stderr: &strings.Builder{}})
		var kept []string
		for _, w := range ws {
			if w != "-" {
				kept = append(kept, w)
			}
		}
		text := strings.Join(kept, " ")
		in := strings.TrimRightFunc(stdin, unicode.IsSpace)
		if errors.Is(err, ErrNoPrompt) {
			if strings.TrimSpace(text) != "" || in != "" {
				t.Fatalf("ErrNoPrompt for words %q stdin %q", ws, stdin)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got, text) || !strings.HasSuffix(got, in) {
			t.Fatalf("words %q stdin %q gave %q", ws, stdin, got)
		}
	})
}

package tools

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/llm"
)

// Limits shared by the tools.
const (
	// MaxResultChars is the most characters (runes) of text a tool result
	// keeps; longer text is cut and the full text saved to a file.
	MaxResultChars = 30000
	// NestedMaxResultChars is the budget of a nested call's result (ama's
	// NESTED_MAX_RESULT_CHARS): a script that counts a file's lines must
	// see them, and the script's own output is what is cut for the model.
	NestedMaxResultChars = 1 << 20
	// MaxOutputLines is the most lines of command output a bash result
	// keeps (the tail).
	MaxOutputLines = 2000
)

// SaveOutput writes text to a new file under OutputDir (created with mode
// 0700 on first use) and returns the file's path. prefix names the file
// ("bash", "grep", …).
func (e *Env) SaveOutput(prefix, text string) (string, error) {
	f, err := e.createOutputFile(prefix)
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(text)
	cerr := f.Close()
	if werr != nil {
		return "", fmt.Errorf("save output: %w", werr)
	}
	if cerr != nil {
		return "", fmt.Errorf("save output: %w", cerr)
	}
	return f.Name(), nil
}

func (e *Env) createOutputFile(prefix string) (*os.File, error) {
	if e == nil || e.OutputDir == "" {
		return nil, fmt.Errorf("save output: %w", errNoOutputDir)
	}
	f, _, err := ownfs.CreateTemp(e.OutputDir, prefix+"-*.txt")
	if err != nil {
		return nil, fmt.Errorf("save output: %w", err)
	}
	return f, nil
}

// LimitText returns text unchanged when it has at most limit characters
// (a Call's Limit). Otherwise it saves the full text with SaveOutput and
// returns the head (keepTail false) or the tail (keepTail true), cut at a
// line boundary where one is near, plus a note saying how much was left
// out and where the full text is.
func LimitText(env *Env, prefix, text string, keepTail bool, limit int) string {
	if len(text) <= limit {
		return text // fewer bytes than the limit: fewer runes too
	}
	total := utf8.RuneCountInString(text)
	if total <= limit {
		return text
	}
	where := savedNote(env, prefix, text)
	if keepTail {
		kept := tailRunes(text, limit-200)
		return fmt.Sprintf("[output cut: showing the last %d of %d characters; %s]\n", utf8.RuneCountInString(kept), total, where) + kept
	}
	kept := headRunes(text, limit-200)
	return kept + fmt.Sprintf("\n[output cut: showing the first %d of %d characters; %s]", utf8.RuneCountInString(kept), total, where)
}

// LimitResult applies LimitText (keeping the head) to every text block of
// r, so that no block exceeds limit characters. It is what a tool runner
// applies to results of tools it does not know.
func LimitResult(env *Env, prefix string, r *Result, limit int) *Result {
	if r == nil {
		return r
	}
	for i, c := range r.Content {
		if t, ok := c.(*llm.TextContent); ok && len(t.Text) > limit {
			if cut := LimitText(env, prefix, t.Text, false, limit); cut != t.Text {
				r.Content[i] = llm.Text(cut)
			}
		}
	}
	return r
}

// savedNote saves text and says where, or that it could not be saved.
func savedNote(env *Env, prefix, text string) string {
	path, err := env.SaveOutput(prefix, text)
	if err != nil {
		return "the full text could not be saved"
	}
	return "full text saved to " + path
}

// headRunes returns at most n runes from the start of s, ending after a
// newline when there is one in the last fifth.
func headRunes(s string, n int) string {
	i, k := 0, 0
	for i < len(s) && k < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	head := s[:i]
	if nl := strings.LastIndexByte(head, '\n'); nl >= 0 && nl >= len(head)*4/5 {
		head = head[:nl+1]
	}
	return head
}

// tailRunes returns at most n runes from the end of s, starting after a
// newline when there is one in the first fifth.
func tailRunes(s string, n int) string {
	i, k := len(s), 0
	for i > 0 && k < n {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
		k++
	}
	tail := s[i:]
	if i > 0 && s[i-1] != '\n' {
		if nl := strings.IndexByte(tail, '\n'); nl >= 0 && nl < len(tail)/5 {
			tail = tail[nl+1:]
		}
	}
	return tail
}

// lastLines returns the last n lines of s (a trailing newline does not
// start a new line) and whether lines were dropped.
func lastLines(s string, n int) (string, bool) {
	end := len(s)
	if strings.HasSuffix(s, "\n") {
		end--
	}
	count := 0
	for i := end - 1; i >= 0; i-- {
		if s[i] == '\n' {
			count++
			if count == n {
				return s[i+1:], true
			}
		}
	}
	return s, false
}

func itoa(n int) string { return strconv.Itoa(n) }

// formatBytes renders a size for people: 512 B, 1.5 KB, 2.0 MB.
func formatBytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}

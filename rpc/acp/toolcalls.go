package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/internal/utf8cut"
	"github.com/armadra/ama-rpc/llm"
)

// Limits of tool call content (the reference's).
const (
	// maxToolText caps the text of one tool call content item.
	maxToolText = 4 << 10
	// maxDiffBytes is the largest old or new text a diff carries.
	maxDiffBytes = 256 << 10
)

// Tool kinds and statuses of ACP.
const (
	kindRead    = "read"
	kindEdit    = "edit"
	kindDelete  = "delete"
	kindMove    = "move"
	kindSearch  = "search"
	kindExecute = "execute"
	kindThink   = "think"
	kindFetch   = "fetch"
	kindOther   = "other"

	statusPending    = "pending"
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusFailed     = "failed"
)

// toolKind maps a tool to its ACP kind: read and ls read; grep and glob
// search; write and edit edit; bash executes; todo thinks (it only plans);
// fetching tools fetch; everything else is other.
func toolKind(name string) string {
	switch name {
	case "read", "ls":
		return kindRead
	case "grep", "glob":
		return kindSearch
	case "write", "edit":
		return kindEdit
	case "bash":
		return kindExecute
	case "todo":
		return kindThink
	case "fetch", "web_fetch", "webfetch":
		return kindFetch
	case "delete", "rm":
		return kindDelete
	case "move", "mv":
		return kindMove
	}
	return kindOther
}

// toolArgs are the argument fields the ACP mapping looks at.
type toolArgs struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
	Command string `json:"command"`
	Content string `json:"content"`
	Offset  int    `json:"offset"`
	Job     string `json:"job"`
	Action  string `json:"action"`
}

func parseArgs(raw json.RawMessage) toolArgs {
	var a toolArgs
	_ = json.Unmarshal(raw, &a)
	return a
}

// toolTitle is the human-readable title of a call.
func toolTitle(name string, raw json.RawMessage) string {
	a := parseArgs(raw)
	switch name {
	case "read":
		if a.Path != "" {
			return "Read " + a.Path
		}
	case "write":
		if a.Path != "" {
			return "Write " + a.Path
		}
	case "edit":
		if a.Path != "" {
			return "Edit " + a.Path
		}
	case "ls":
		if a.Path == "" {
			return "List ."
		}
		return "List " + a.Path
	case "grep":
		if a.Pattern != "" {
			t := "Search " + quoteShort(a.Pattern)
			if a.Path != "" {
				t += " in " + a.Path
			}
			return t
		}
	case "glob":
		if a.Pattern != "" {
			t := "Find " + a.Pattern
			if a.Path != "" {
				t += " in " + a.Path
			}
			return t
		}
	case "bash":
		if a.Command != "" {
			return "Run " + firstLine(a.Command, 120)
		}
		if a.Job != "" {
			return fmt.Sprintf("Job %s: %s", a.Job, a.Action)
		}
	}
	return name
}

func quoteShort(s string) string { return fmt.Sprintf("%q", firstLine(s, 80)) }

// lineHead returns the end of s's first line or of its first max runes,
// whichever comes first. Only those runes are read: a title is not worth
// scanning (or, as []rune, copying four times over) a 40 MiB prompt or
// command.
func lineHead(s string, max int) int {
	i, n := 0, 0
	for i < len(s) && s[i] != '\n' && n < max {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return i
}

// firstLine returns the first line of s, cut to max runes ("…" marks a cut).
func firstLine(s string, max int) string {
	i := lineHead(s, max)
	line := s[:i]
	switch {
	case i == len(s):
		return line
	case s[i] == '\n':
		if i+1 == len(s) { // nothing after the newline
			return line
		}
	}
	return line + "…"
}

// absPath resolves a tool path against the session cwd.
func absPath(cwd, p string) string {
	if p == "" {
		return cwd
	}
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[2:])
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// toolLocations are the files a call touches (absolute paths; read calls
// with an offset name the line).
func toolLocations(name string, raw json.RawMessage, cwd string) []toolLocation {
	a := parseArgs(raw)
	switch name {
	case "read", "write", "edit":
		if a.Path == "" {
			return nil
		}
		loc := toolLocation{Path: absPath(cwd, a.Path)}
		if name == "read" && a.Offset > 0 {
			line := a.Offset
			loc.Line = &line
		}
		return []toolLocation{loc}
	case "ls", "grep", "glob":
		if a.Path == "" {
			return nil
		}
		return []toolLocation{{Path: absPath(cwd, a.Path)}}
	}
	return nil
}

// textItem is a text content item, cut to maxToolText from the head.
func textItem(text string) toolCallContent {
	return toolCallContent{Type: "content", Content: &contentBlock{Type: "text", Text: capHead(text, maxToolText)}}
}

// capHead keeps the first max bytes of s (on a rune boundary) and says how
// much was left out.
func capHead(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head := utf8cut.Head(s, max)
	return head + fmt.Sprintf("\n… (%d more bytes)", len(s)-len(head))
}

// capTail keeps the last max bytes of s (streamed output: the newest part
// matters).
func capTail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	tail := utf8cut.Tail(s, max)
	return fmt.Sprintf("… (%d earlier bytes)\n", len(s)-len(tail)) + tail
}

// resultItems turns tool result content into content items: one text item
// (all text blocks joined, capped) and one item per image.
func resultItems(content []llm.Content) []toolCallContent {
	var out []toolCallContent
	var texts []string
	for _, c := range content {
		switch b := c.(type) {
		case *llm.TextContent:
			texts = append(texts, b.Text)
		case *llm.ImageContent:
			out = append(out, toolCallContent{Type: "content", Content: &contentBlock{Type: "image", Data: b.Data, MimeType: b.MimeType}})
		}
	}
	if t := strings.Join(texts, "\n"); t != "" {
		out = append([]toolCallContent{textItem(t)}, out...)
	}
	return out
}

// readForDiff reads a file for a diff: its text and whether it exists.
// ok is false when the file cannot be diffed (too large, unreadable, not
// UTF-8).
func readForDiff(path string) (text string, exists, ok bool) {
	b, err := ownfs.ReadShown(path, maxDiffBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, true
	}
	if err != nil || !utf8.Valid(b) {
		return "", true, false
	}
	return string(b), true, true
}

// diffItem is a diff content item.
func diffItem(path string, oldText *string, newText string) toolCallContent {
	return toolCallContent{Type: "diff", Path: path, OldText: oldText, NewText: &newText}
}

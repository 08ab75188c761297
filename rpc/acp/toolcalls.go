package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/utf8cut"
	"github.com/armadra/ama-rpc/llm"
)

// Limits of tool call content (the reference's).
const (
	// maxToolText caps the text of one tool call content item.
	maxToolText = 4 << 10
	// maxDiffBytes is the largest old or new text a diff item carries.
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

// toolLocations are the files a call touches: target, the file its tool
// call names made absolute by the tools' resolver (tools.Env.Target; "":
// none); a read with an offset names the line.
func toolLocations(name string, raw json.RawMessage, target string) []toolLocation {
	if target == "" {
		return nil
	}
	loc := toolLocation{Path: target}
	var a toolArgs
	if name == "read" && json.Unmarshal(raw, &a) == nil && a.Offset > 0 {
		loc.Line = &a.Offset
	}
	return []toolLocation{loc}
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

// diffItem is a diff content item.
func diffItem(path string, oldText *string, newText string) toolCallContent {
	return toolCallContent{Type: "diff", Path: path, OldText: oldText, NewText: &newText}
}

// diffContent is the content of a change as its tool computed it (the
// preview's for an ask, the result's for a finished call): one diff item,
// none without a diff or when a text exceeds maxDiffBytes.
func diffContent(d *events.FileDiff) []toolCallContent {
	if d == nil || len(d.NewText) > maxDiffBytes || d.OldText != nil && len(*d.OldText) > maxDiffBytes {
		return nil
	}
	return []toolCallContent{diffItem(d.Path, d.OldText, d.NewText)}
}

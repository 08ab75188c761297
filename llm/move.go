package llm

import (
	"slices"

	"github.com/armadra/ama-rpc/internal/alias"
)

// The big strings of a message are the ones worth counting without
// encoding (EncodedLen) and moving out of the heap (MoveStrings): the
// string content of user and custom messages, and the text, thinking and
// image data of content blocks, from SpliceBytes up. A pasted file, an
// image read by a tool or attached to a prompt live there.

// MoveStrings returns m with each big string replaced by move's result,
// the same characters held elsewhere (a read-only file mapping); when move
// reports false the string stays. The moved strings' encoded lengths are
// recorded (NoteMovedText), so sizing the message never reads them. The
// result is a copy when anything moved; m is not modified.
func MoveStrings(m Message, move func(string) (string, bool)) Message {
	return rewriteStrings(m, func(s string) string {
		moved, ok := move(s)
		if !ok || len(moved) != len(s) {
			return s
		}
		NoteMovedText(moved, s)
		return moved
	})
}

// rewriteStrings returns m with each big string s replaced by f(s): a
// copy of the message and of the blocks that change, or m itself when f
// returned every string as it was.
func rewriteStrings(m Message, f func(string) string) Message {
	switch v := m.(type) {
	case *UserMessage:
		if c, ok := rewriteContent(v.Content, f); ok {
			cp := *v
			cp.Content = c
			return &cp
		}
	case *CustomMessage:
		if c, ok := rewriteContent(v.Content, f); ok {
			cp := *v
			cp.Content = c
			return &cp
		}
	case *ToolResultMessage:
		if b, ok := rewriteBlocks(v.Content, f); ok {
			cp := *v
			cp.Content = b
			return &cp
		}
	case *AssistantMessage:
		if b, ok := rewriteBlocks(v.Content, f); ok {
			cp := *v
			cp.Content = b
			return &cp
		}
	}
	return m
}

func rewriteContent(u UserContent, f func(string) string) (UserContent, bool) {
	if !u.IsBlocks {
		t, ok := rewrite(u.Text, f)
		u.Text = t
		return u, ok
	}
	b, ok := rewriteBlocks(u.Blocks, f)
	u.Blocks = b
	return u, ok
}

func rewriteBlocks(blocks []Content, f func(string) string) ([]Content, bool) {
	var out []Content
	for i, c := range blocks {
		var nc Content
		switch b := c.(type) {
		case *TextContent:
			if t, ok := rewrite(b.Text, f); ok {
				cp := *b
				cp.Text = t
				nc = &cp
			}
		case *ThinkingContent:
			if t, ok := rewrite(b.Thinking, f); ok {
				cp := *b
				cp.Thinking = t
				nc = &cp
			}
		case *ImageContent:
			if t, ok := rewrite(b.Data, f); ok {
				cp := *b
				cp.Data = t
				nc = &cp
			}
		}
		if nc != nil {
			if out == nil {
				out = slices.Clone(blocks)
			}
			out[i] = nc
		}
	}
	if out == nil {
		return blocks, false
	}
	return out, true
}

// rewrite applies f to a big string and reports whether the result is
// another string (compared by address: the contents may be equal).
func rewrite(s string, f func(string) string) (string, bool) {
	if len(s) < SpliceBytes {
		return s, false
	}
	t := f(s)
	return t, alias.IDOf(t) != alias.IDOf(s)
}

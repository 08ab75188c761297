package llm

import (
	"github.com/armadra/ama-rpc/internal/jsonstr"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Content is one block of message content: *TextContent, *ThinkingContent,
// *ImageContent or *ToolCall. The set is closed.
type Content interface {
	contentBlock()
}

// TextContent is a text block.
type TextContent struct {
	Type string `json:"type"` // always "text"
	Text string `json:"text"`
}

// ThinkingContent is a reasoning block.
type ThinkingContent struct {
	Type              string `json:"type"` // always "thinking"
	Thinking          string `json:"thinking"`
	ThinkingSignature string `json:"thinkingSignature,omitempty"`
	Redacted          bool   `json:"redacted,omitempty"`
}

// ImageContent is an inline image (base64 data, never truncated).
type ImageContent struct {
	Type     string `json:"type"` // always "image"
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

// ToolCall is a tool invocation requested by the model. Arguments is the
// compact JSON object the model produced; it is kept raw so key order is
// preserved.
type ToolCall struct {
	Type             string          `json:"type"` // always "toolCall"
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	ThoughtSignature string          `json:"thoughtSignature,omitempty"`
	// RawArguments holds the text the model sent when it was not valid JSON;
	// Arguments is then {} and the tool runner reports the parse failure.
	RawArguments string `json:"rawArguments,omitempty"`
}

func (*TextContent) contentBlock()     {}
func (*ThinkingContent) contentBlock() {}
func (*ImageContent) contentBlock()    {}
func (*ToolCall) contentBlock()        {}

// Text returns a text block.
func Text(s string) *TextContent { return &TextContent{Type: "text", Text: s} }

// Image returns an image block.
func Image(data, mime string) *ImageContent {
	return &ImageContent{Type: "image", Data: data, MimeType: mime}
}

// NewToolCall returns a tool call block; nil or empty arguments become {}.
func NewToolCall(id, name string, args json.RawMessage) *ToolCall {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	return &ToolCall{Type: "toolCall", ID: id, Name: name, Arguments: args}
}

// Blocks is a list of content blocks that decodes by each block's "type".
type Blocks []Content

// ErrUnknownBlock is returned when a content block has an unknown type.
var ErrUnknownBlock = errors.New("unknown content block type")

// UnmarshalJSON decodes each element by its "type" field.
func (b *Blocks) UnmarshalJSON(data []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	out := make(Blocks, 0, len(raws))
	for _, raw := range raws {
		c, err := DecodeContent(raw)
		if err != nil {
			return err
		}
		out = append(out, c)
	}
	*b = out
	return nil
}

// DecodeContent decodes one content block.
func DecodeContent(raw json.RawMessage) (Content, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	var c Content
	switch head.Type {
	case "text":
		c = &TextContent{}
	case "thinking":
		c = &ThinkingContent{}
	case "image":
		c = &ImageContent{}
	case "toolCall":
		c = &ToolCall{}
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownBlock, head.Type)
	}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	if tc, ok := c.(*ToolCall); ok && len(tc.Arguments) == 0 {
		tc.Arguments = json.RawMessage(`{}`)
	}
	return c, nil
}

// UserContent is the content of a user or custom message: either a plain
// string or a list of blocks. The zero value is the empty string.
type UserContent struct {
	Text   string
	Blocks Blocks
	// IsBlocks selects the block form when encoding.
	IsBlocks bool
}

// StringContent returns string-form content.
func StringContent(s string) UserContent { return UserContent{Text: s} }

// BlockContent returns block-form content.
func BlockContent(b ...Content) UserContent { return UserContent{Blocks: b, IsBlocks: true} }

// MarshalJSON writes a JSON string or an array of blocks. HTML characters
// are not escaped: encoding/json keeps a Marshaler's output as it is, so
// escaping here would show up on the wire and in session files.
func (u UserContent) MarshalJSON() ([]byte, error) {
	if u.IsBlocks {
		if u.Blocks == nil {
			return []byte("[]"), nil
		}
		return marshalRaw([]Content(u.Blocks), 0)
	}
	// Written in one exact buffer: encoding/json would grow its own
	// buffer to the size of a huge prompt, then copy it out.
	return jsonstr.Append(make([]byte, 0, jsonstr.Len(u.Text, jsonstr.Wire, false)), u.Text, jsonstr.Wire), nil
}

// marshalRaw is json.Marshal without HTML escaping and without the
// encoder's trailing newline.
// sizeHint pre-sizes the result (a huge prompt is then written once into
// an exact buffer instead of a growing one).
func marshalRaw(v any, sizeHint int) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, sizeHint))
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON accepts a string or an array of blocks.
func (u *UserContent) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		*u = UserContent{}
		return json.Unmarshal(data, &u.Text)
	}
	var b Blocks
	if err := b.UnmarshalJSON(data); err != nil {
		return err
	}
	*u = UserContent{Blocks: b, IsBlocks: true}
	return nil
}

// PlainText returns the string content, or the concatenation of the text
// blocks (other blocks contribute nothing).
func (u UserContent) PlainText() string {
	if !u.IsBlocks {
		return u.Text
	}
	return JoinText(u.Blocks, "")
}

// Images returns the image blocks of block-form content.
func (u UserContent) Images() []*ImageContent {
	var out []*ImageContent
	for _, c := range u.Blocks {
		if im, ok := c.(*ImageContent); ok {
			out = append(out, im)
		}
	}
	return out
}

// JoinText concatenates the text blocks of content with sep between them.
func JoinText(blocks []Content, sep string) string {
	var buf bytes.Buffer
	n := 0
	for _, c := range blocks {
		if t, ok := c.(*TextContent); ok {
			if n > 0 {
				buf.WriteString(sep)
			}
			buf.WriteString(t.Text)
			n++
		}
	}
	return buf.String()
}

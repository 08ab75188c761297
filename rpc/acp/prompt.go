package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/internal/jsonstr"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

// handlePrompt: session/prompt {sessionId, prompt} → {stopReason, usage}
// once the turn has settled. The request is validated and queued inline;
// the answer comes later (see turns.go).
func handlePrompt(s *Server, c *call, p *promptParams) {
	if s.stopping() {
		c.fail(fmt.Errorf("ama-rpc is shutting down"))
		return
	}
	as, err := s.session(p.SessionID)
	if err != nil {
		c.fail(err)
		return
	}
	in, err := promptInput(p.Prompt)
	p.Prompt = nil
	if err != nil {
		c.fail(err)
		return
	}
	as.enqueue(newTurn(c, in))
}

// decodeParams decodes session/prompt's params as decodeParams would
// (keys matched without regard to case, the last one winning), except that
// the content blocks stay sub-slices of the params: json.RawMessage
// would copy a pasted 50 MiB text once more.
func (p *promptParams) decodeParams(c *call) error {
	raw := c.rawParams()
	var err error
	fail := func(format string, args ...any) {
		if err == nil {
			err = errorf(errInvalidParams, "invalid params of %s: "+format, append([]any{c.req.Method}, args...)...)
		}
	}
	if !jsonobj.Members(raw, func(k string, v []byte) {
		switch {
		case strings.EqualFold(k, "sessionId"):
			if e := json.Unmarshal(v, &p.SessionID); e != nil {
				fail("sessionId: %v", e)
			}
		case strings.EqualFold(k, "prompt"):
			p.Prompt = nil
			if string(v) == "null" {
				return
			}
			if !jsonobj.Elements(v, func(b []byte) { p.Prompt = append(p.Prompt, b) }) {
				fail("prompt is not an array")
			}
		}
	}) {
		fail("params are not an object")
	}
	return err
}

// promptInput converts ACP content blocks into the session's input, as
// ama does: every text-like block becomes one part, in block order, and
// the parts are joined with a newline (text as is, a resource link as
// "@uri", an embedded text resource as a <resource uri="…"> block);
// images (image blocks and embedded image blobs) go with the message in
// block order. Audio (not offered), invalid images and unknown block types
// are invalid params.
func promptInput(blocks []json.RawMessage) (session.PromptInput, error) {
	var in session.PromptInput
	var parts []part
	image := func(i int, data, mime string) error {
		if data == "" || mime == "" {
			return localized(errInvalidParams, i18n.ACPErrImageFields, i)
		}
		if err := llm.ValidateImage(data, mime); err != nil {
			return errorf(errInvalidParams, "prompt[%d]: %v", i, err)
		}
		in.Images = append(in.Images, llm.Image(data, mime))
		return nil
	}
	for i, raw := range blocks {
		b, lit, huge := hugeBlock(raw)
		if !huge {
			if err := json.Unmarshal(raw, &b); err != nil {
				return in, errorf(errInvalidParams, "prompt[%d] is not a content block: %v", i, err)
			}
		}
		switch {
		case huge && b.Type == "text":
			parts = append(parts, part{raw: lit})
			continue
		case huge: // an image
			b.Data = asArrived(lit)
		}
		switch b.Type {
		case "text":
			parts = append(parts, part{s: b.Text})
		case "image":
			if err := image(i, b.Data, b.MimeType); err != nil {
				return in, err
			}
		case "resource_link":
			if b.URI == "" {
				return in, localized(errInvalidParams, i18n.ACPErrResourceLinkURI, i)
			}
			parts = append(parts, part{s: "@" + b.URI})
		case "resource":
			var r embeddedResource
			if len(b.Resource) == 0 || json.Unmarshal(b.Resource, &r) != nil || r.URI == "" {
				return in, localized(errInvalidParams, i18n.ACPErrResourceURI, i)
			}
			switch {
			case r.Text != nil:
				parts = append(parts, part{s: fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.URI, *r.Text)})
			case r.Blob != nil && strings.HasPrefix(r.MimeType, "image/"):
				if err := image(i, *r.Blob, r.MimeType); err != nil {
					return in, err
				}
			default:
				parts = append(parts, part{s: "@" + r.URI})
			}
		case "audio":
			return in, localized(errInvalidParams, i18n.ACPErrNoAudio, i)
		default:
			return in, localized(errInvalidParams, i18n.ACPErrUnknownBlock, i, b.Type)
		}
	}
	msg := joinParts(parts)
	if strings.TrimSpace(msg) == "" && len(in.Images) == 0 {
		return in, localized(errInvalidParams, i18n.ACPErrEmptyPrompt)
	}
	in.Message = msg
	return in, nil
}

// handleCancel: the session/cancel notification.
func handleCancel(s *Server, p *sessionIDParams) {
	if as, err := s.session(p.SessionID); err == nil {
		as.cancel()
	}
}

// handleCancelRequest: the $/cancel_request notification withdraws one of
// the client's requests. Only prompts take long enough to be withdrawn;
// the withdrawn prompt answers -32800.
func handleCancelRequest(s *Server, p *cancelRequestParams) {
	id, ok := s.requestID(p.RequestID)
	if !ok {
		return
	}
	for _, as := range s.sessionList() {
		if as.withdraw(id) {
			return
		}
	}
}

// part is one text-like part of a prompt: a string, or the JSON string
// literal of a huge text block (a sub-slice of the request line), decoded
// straight into the message.
type part struct {
	s   string
	raw []byte
}

// joinParts joins the parts with a newline into one new string: a huge
// text is decoded into it once, not first into a string of its own and
// then copied (a pasted 40 MiB text held three times at once: the line,
// the block's text, the message).
func joinParts(parts []part) string {
	if len(parts) == 1 && parts[0].raw == nil {
		return parts[0].s
	}
	n := 0
	for _, p := range parts {
		n += len(p.s) + len(p.raw) + 1 // a literal's length bounds its text but for invalid UTF-8
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, '\n')
		}
		if p.raw != nil {
			b, _, _ = jsonstr.AppendUnquoted(b, p.raw) // valid JSON: hugeBlock checked it
		} else {
			b = append(b, p.s...)
		}
	}
	return alias.String(b) // b is built here and never written again (as strings.Builder does)
}

// hugeTextBytes is the block size from which a text block's text or an
// image block's data is kept as its literal (hugeBlock).
const hugeTextBytes = 1 << 20

// hugeBlock decodes a huge text or image block without copying its text
// or data: the block is decoded with that member's value replaced by ""
// (so the other members are checked as usual) and the member's JSON
// string literal, a sub-slice of raw, is returned (the last member of that
// name without regard to case, as encoding/json picks it). Anything else
// (a smaller block, another type, a member that is not a string, a block
// contentBlock would reject) is false, and the block is decoded as usual
// (with its usual error).
func hugeBlock(raw []byte) (b contentBlock, lit []byte, ok bool) {
	if len(raw) < hugeTextBytes {
		return b, nil, false
	}
	var text, data []byte
	jsonobj.Members(raw, func(k string, v []byte) {
		switch {
		case strings.EqualFold(k, "text"):
			text = v
		case strings.EqualFold(k, "data"):
			data = v
		}
	})
	want, lit := "text", text
	if len(data) > len(text) {
		want, lit = "image", data
	}
	if len(lit) < 2 || lit[0] != '"' {
		return b, nil, false
	}
	at := cap(raw) - cap(lit) // lit is raw[at:at+len(lit)]
	rest := make([]byte, 0, len(raw)-len(lit)+2)
	rest = append(append(append(rest, raw[:at]...), `""`...), raw[at+len(lit):]...)
	if json.Unmarshal(rest, &b) != nil || b.Type != want {
		return contentBlock{}, nil, false
	}
	return b, lit, true
}

// asArrived returns the text of the JSON string literal lit (valid JSON).
// Base64 needs no escapes: its bytes between the quotes are then the
// string itself, held where the request line holds them (internal/alias:
// the stream hands a huge line over and never writes it again, park), so
// a 40 MiB image is not copied; the string keeps the line alive until the
// message's entry shares the body's bytes instead (store/share.go). A
// literal with escapes or invalid UTF-8 is decoded as encoding/json would.
func asArrived(lit []byte) string {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return alias.String(inner)
	}
	var s string
	_ = json.Unmarshal(lit, &s)
	return s
}

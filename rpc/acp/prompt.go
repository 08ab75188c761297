package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/jsonlit"
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
	in, err := promptInput(p.Prompt, p.lifted)
	p.Prompt, p.lifted = nil, nil
	if err != nil {
		c.fail(err)
		return
	}
	as.enqueue(newTurn(c, in))
}

// promptInput converts ACP content blocks into the session's input, as
// ama does: every text-like block becomes one part, in block order, and
// the parts are joined with a newline (text as is, a resource link as
// "@uri", an embedded text resource as a <resource uri="…"> block);
// images (image blocks and embedded image blobs) go with the message in
// block order. Audio (not offered), invalid images and unknown block types
// are invalid params. Texts, data and blobs are decoded in place
// (promptBlock).
//
// lifted (nil: none) holds the huge literals the blocks' Lits stand for
// (jsonlit.Lift): the blocks are then sub-slices of its Small.
func promptInput(blocks []jsonlit.Raw, lifted *jsonlit.Lifted) (session.PromptInput, error) {
	var in session.PromptInput
	var parts []part
	image := func(i int, data jsonlit.Lit, mime string) error {
		if len(data) <= 2 || mime == "" {
			return localized(errInvalidParams, i18n.ACPErrImageFields, i)
		}
		text := data.Text()
		if err := llm.ValidateImage(text, mime); err != nil {
			return errorf(errInvalidParams, "prompt[%d]: %v", i, err)
		}
		in.Images = append(in.Images, llm.Image(text, mime))
		return nil
	}
	for i, raw := range blocks {
		var b promptBlock
		if json.Unmarshal(raw, &b) != nil {
			err := json.Unmarshal(raw, new(contentBlock)) // its error word for word
			return in, errorf(errInvalidParams, "prompt[%d] is not a content block: %v", i, err)
		}
		b.Text, b.Data = lifted.Lit(b.Text), lifted.Lit(b.Data)
		switch b.Type {
		case "text":
			parts = append(parts, part{raw: b.Text})
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
			if r.Text != nil {
				*r.Text = lifted.Lit(*r.Text)
			}
			if r.Blob != nil {
				*r.Blob = lifted.Lit(*r.Blob)
			}
			switch {
			case r.Text != nil:
				parts = append(parts, part{s: fmt.Sprintf("<resource uri=%q>\n", r.URI), raw: *r.Text, end: "\n</resource>"})
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

// part is one text-like part of a prompt: s, then the text of the JSON
// string literal raw (a sub-slice of the request line, jsonlit), then end,
// so that a huge text is decoded straight into the message.
type part struct {
	s   string
	raw jsonlit.Lit
	end string
}

// joinParts joins the parts with a newline into one new string: a huge
// text is decoded into it once, not first into a string of its own and
// then copied (a pasted 40 MiB text held three times at once: the line,
// the block's text, the message). A lone text is the literal's Text.
func joinParts(parts []part) string {
	if p := parts; len(p) == 1 && p[0].end == "" && (p[0].s == "" || p[0].raw == nil) {
		return p[0].s + p[0].raw.Text()
	}
	n := 0
	for _, p := range parts {
		n += len(p.s) + len(p.raw) + len(p.end) + 1 // a literal's length bounds its text but for invalid UTF-8
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, p.s...)
		if p.raw != nil {
			b, _, _ = jsonstr.AppendUnquoted(b, p.raw) // valid JSON: encoding/json checked it
		}
		b = append(b, p.end...)
	}
	return alias.String(b) // b is built here and never written again (as strings.Builder does)
}

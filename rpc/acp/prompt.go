package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/jsonobj"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

// handlePrompt: session/prompt {sessionId, prompt} → {stopReason, usage}
// once the turn has settled. The request is validated and queued inline;
// the answer comes later (see turns.go).
func handlePrompt(s *Server, c *call) {
	p, err := decodePrompt(c)
	c.params = nil // the call lives until the turn ends; the line need not
	if err != nil {
		c.fail(err)
		return
	}
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

// decodePrompt decodes session/prompt's params as decodeParams would
// (keys matched without regard to case, the last one winning), except that
// the content blocks stay sub-slices of the params: json.RawMessage
// would copy a pasted 50 MiB text once more.
func decodePrompt(c *call) (promptParams, error) {
	var p promptParams
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
	return p, err
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
	var parts []string
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
		var b contentBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			return in, errorf(errInvalidParams, "prompt[%d] is not a content block: %v", i, err)
		}
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			if err := image(i, b.Data, b.MimeType); err != nil {
				return in, err
			}
		case "resource_link":
			if b.URI == "" {
				return in, localized(errInvalidParams, i18n.ACPErrResourceLinkURI, i)
			}
			parts = append(parts, "@"+b.URI)
		case "resource":
			var r embeddedResource
			if len(b.Resource) == 0 || json.Unmarshal(b.Resource, &r) != nil || r.URI == "" {
				return in, localized(errInvalidParams, i18n.ACPErrResourceURI, i)
			}
			switch {
			case r.Text != nil:
				parts = append(parts, fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.URI, *r.Text))
			case r.Blob != nil && strings.HasPrefix(r.MimeType, "image/"):
				if err := image(i, *r.Blob, r.MimeType); err != nil {
					return in, err
				}
			default:
				parts = append(parts, "@"+r.URI)
			}
		case "audio":
			return in, localized(errInvalidParams, i18n.ACPErrNoAudio, i)
		default:
			return in, localized(errInvalidParams, i18n.ACPErrUnknownBlock, i, b.Type)
		}
	}
	msg := strings.Join(parts, "\n")
	if strings.TrimSpace(msg) == "" && len(in.Images) == 0 {
		return in, localized(errInvalidParams, i18n.ACPErrEmptyPrompt)
	}
	in.Message = msg
	return in, nil
}

// handleCancel: the session/cancel notification.
func handleCancel(s *Server, c *call) {
	defer c.reply(nil)
	var p sessionIDParams
	if err := decodeParams(c, &p); err != nil {
		s.log.Debug("session/cancel ignored: " + err.Error())
		return
	}
	if as, err := s.session(p.SessionID); err == nil {
		as.cancel()
	}
}

// handleCancelRequest: the $/cancel_request notification withdraws one of
// the client's requests. Only prompts take long enough to be withdrawn;
// the withdrawn prompt answers -32800.
func handleCancelRequest(s *Server, c *call) {
	defer c.reply(nil)
	var p cancelRequestParams
	if err := decodeParams(c, &p); err != nil {
		return
	}
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

package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/armadra/ama-rpc/internal/jsonobj"
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
	var parts []string
	image := func(i int, data, mime string) error {
		if data == "" || mime == "" {
			return errorf(errInvalidParams, "prompt[%d]: an image needs data and mimeType", i)
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
				return in, errorf(errInvalidParams, "prompt[%d]: a resource_link needs a uri", i)
			}
			parts = append(parts, "@"+b.URI)
		case "resource":
			var r embeddedResource
			if len(b.Resource) == 0 || json.Unmarshal(b.Resource, &r) != nil || r.URI == "" {
				return in, errorf(errInvalidParams, "prompt[%d]: a resource needs resource.uri", i)
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
			return in, errorf(errInvalidParams, "prompt[%d]: audio is not supported (promptCapabilities.audio is false)", i)
		default:
			return in, errorf(errInvalidParams, "prompt[%d]: unknown content block type %q", i, b.Type)
		}
	}
	msg := strings.Join(parts, "\n")
	if strings.TrimSpace(msg) == "" && len(in.Images) == 0 {
		return in, errorf(errInvalidParams, "prompt is empty")
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

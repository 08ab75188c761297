package acp_test

import (
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/golden"
)

// Issue 13: a run that fails after session/prompt was accepted answers the
// prompt with a JSON-RPC error carrying the provider's text (the RPC mode
// sends a notification instead); invalid images are -32602 before a run.
func TestPromptFailureAndBadImages(t *testing.T) {
	c := startACP(t, `[{"error":{"kind":"auth"}}]`)
	c.initialize()
	sid := c.newSession()
	c.send(1, "session/prompt", prompt(sid, "hi"))
	res := c.response(1)
	e, ok := res.Get("error")
	if !ok || !strings.Contains(string(golden.Encode(e)), "401") {
		t.Fatalf("prompt after a 401: %s", golden.Encode(res))
	}
	for i, img := range []map[string]any{
		{"type": "image", "data": "not base64!", "mimeType": "image/png"},
		{"type": "image", "data": "PGgxPg==", "mimeType": "text/html"},
	} {
		p := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "see"}, img}}
		if code := c.callErr(10+i, "session/prompt", p); code != -32602 {
			t.Errorf("image %v: code %d, want -32602", img, code)
		}
	}
	c.finish(0)
}

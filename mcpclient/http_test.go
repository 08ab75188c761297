package mcpclient

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/test/mcpserver"
)

// The http (streamable) and sse transports reach an SDK server, with the
// configured headers on every request.
func TestHTTPAndSSE(t *testing.T) {
	srv := mcpserver.New()
	var bad atomic.Int32
	auth := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer test-token" {
				bad.Add(1)
				http.Error(w, "no token", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	streamable := httptest.NewServer(auth(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(auth(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	t.Cleanup(sse.Close)
	hdr := map[string]string{"Authorization": "Bearer test-token"}
	s := newTestSet(t, []Server{
		{Name: "web", Transport: TransportHTTP, URL: streamable.URL, Headers: hdr},
		{Name: "old", Transport: TransportSSE, URL: sse.URL, Headers: hdr},
	}, Options{})
	ready(t, s)
	for _, name := range []string{"mcp__web__echo", "mcp__old__echo"} {
		res := run(t, s, name, `{"text":"over the network"}`)
		if res.IsError || llm.JoinText(res.Content, "") != "echo: over the network" {
			t.Errorf("%s = %+v", name, res)
		}
	}
	if n := bad.Load(); n != 0 {
		t.Errorf("%d requests without the configured header", n)
	}
}

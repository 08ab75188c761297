package openai_test

import "testing"

// The cached-token variants of OpenAI-compatible endpoints, each served by
// a loopback server: OpenAI / vLLM (prompt_tokens_details.cached_tokens),
// OpenRouter (plus cache_write_tokens), DeepSeek (prompt_cache_hit_tokens),
// Moonshot (top-level cached_tokens), and an endpoint without any cache
// field (NoCacheField, a vote for the "silent" reporting state).
func TestStreamCachedTokenVariants(t *testing.T) {
	cases := []struct {
		name               string
		usage              map[string]any
		input, read, write int
		noField            bool
	}{
		{"openai", map[string]any{"prompt_tokens_details": map[string]any{"cached_tokens": 3000}}, 1000, 3000, 0, false},
		{"vllm-zero", map[string]any{"prompt_tokens_details": map[string]any{"cached_tokens": 0}}, 4000, 0, 0, false},
		{"openrouter", map[string]any{"prompt_tokens_details": map[string]any{"cached_tokens": 2500, "cache_write_tokens": 1000}}, 500, 2500, 1000, false},
		{"deepseek", map[string]any{"prompt_cache_hit_tokens": 2048, "prompt_cache_miss_tokens": 1952}, 1952, 2048, 0, false},
		{"moonshot", map[string]any{"cached_tokens": 1024}, 2976, 1024, 0, false},
		{"none", map[string]any{}, 4000, 0, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := map[string]any{"prompt_tokens": 4000, "completion_tokens": 7, "total_tokens": 4007}
			for k, v := range tc.usage {
				u[k] = v
			}
			chunk := js(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{}, "usage": u})
			s := newServer(t, replay(sse(text("ok"), finish("stop"), chunk, "[DONE]")))
			msg, err, _ := run(t, provider(s, nil), request())
			if err != nil {
				t.Fatal(err)
			}
			got := msg.Usage
			if got.Input != tc.input || got.CacheRead != tc.read || got.CacheWrite != tc.write || got.Output != 7 ||
				got.NoCacheField != tc.noField || got.TotalTokens != 4007 {
				t.Errorf("usage = %+v", got)
			}
		})
	}
}

package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/openai"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func entry(t *testing.T, entries []*llm.ProviderEntry, id string) *llm.ProviderEntry {
	t.Helper()
	for _, e := range entries {
		if e.ID == id {
			return e
		}
	}
	t.Fatalf("no entry %s", id)
	return nil
}

func TestPresets(t *testing.T) {
	want := map[string]struct {
		base, keyEnv string
		needsKey     bool
	}{
		"openai":     {"https://api.openai.com/v1", "OPENAI_API_KEY", true},
		"openrouter": {"https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", true},
		"deepseek":   {"https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", true},
		"ollama":     {"http://127.0.0.1:11434/v1", "", false},
		"lmstudio":   {"http://127.0.0.1:1234/v1", "", false},
		"vllm":       {"http://127.0.0.1:8000/v1", "VLLM_API_KEY", false},
		"groq":       {"https://api.groq.com/openai/v1", "GROQ_API_KEY", true},
		"together":   {"https://api.together.xyz/v1", "TOGETHER_API_KEY", true},
	}
	got := map[string]bool{}
	for _, p := range openai.Presets() {
		got[p.ID] = true
		w, ok := want[p.ID]
		if !ok {
			continue
		}
		if p.BaseURL != w.base || p.KeyEnv != w.keyEnv || p.NeedsKey != w.needsKey {
			t.Errorf("%s = %s %s %t", p.ID, p.BaseURL, p.KeyEnv, p.NeedsKey)
		}
		for _, m := range p.Models {
			if m.ContextWindow == 0 || m.MaxTokens == 0 || m.Prices.Input == 0 || len(m.Input) == 0 {
				t.Errorf("%s/%s incomplete: %+v", p.ID, m.ID, m)
			}
		}
	}
	for id := range want {
		if !got[id] {
			t.Errorf("preset %s missing", id)
		}
	}
	ds := openai.Presets()[2]
	if ds.ID != "deepseek" || len(ds.Models) != 2 || ds.Models[0].ID != "deepseek-chat" || !ds.Models[1].Reasoning {
		t.Errorf("deepseek models = %+v", ds.Models)
	}
	// Presets returns fresh values.
	a := openai.Presets()
	a[0].Models[0].ID = "mutated"
	a[0].Efforts["minimal"] = "mutated"
	if b := openai.Presets(); b[0].Models[0].ID == "mutated" || b[0].Efforts["minimal"] == "mutated" {
		t.Error("Presets shares state between calls")
	}
}

func TestBuildEntriesDefaults(t *testing.T) {
	entries, err := openai.BuildEntries(nil, nil, envOf(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if entries[0].ID != "openai" || len(entries) != len(openai.Presets()) {
		t.Fatalf("entries = %d, first %s", len(entries), entries[0].ID)
	}
	oa := entry(t, entries, "openai")
	if oa.HasKey || oa.KeySource != "none" || oa.OpenModels {
		t.Errorf("openai: hasKey %t source %s open %t", oa.HasKey, oa.KeySource, oa.OpenModels)
	}
	for _, m := range oa.Models {
		if m.Provider != "openai" || m.API != openai.API {
			t.Errorf("model %s: provider %q api %q", m.ID, m.Provider, m.API)
		}
	}
	ol := entry(t, entries, "ollama")
	if !ol.HasKey || ol.KeySource != "none" || !ol.OpenModels || ol.Template.Provider != "ollama" {
		t.Errorf("ollama: %+v", ol)
	}
	reg := llm.NewRegistry(entries...)
	if _, _, err := reg.Find("openai", "gpt-4o"); err != nil {
		t.Error(err)
	}
	if _, _, err := reg.Find("openai", "my-finetune"); err == nil {
		t.Error("openai at its default URL accepted an unknown id")
	}
	m, _, err := reg.Find("openrouter", "anthropic/claude-sonnet-4")
	if err != nil || m.ID != "anthropic/claude-sonnet-4" || m.Provider != "openrouter" {
		t.Errorf("openrouter open model: %+v %v", m, err)
	}

	// A listed provider without its key fails with no_api_key, naming the
	// provider and the variable, without sending anything.
	msg, err := oa.Provider.Stream(context.Background(), &llm.Request{Model: oa.Models[0]}, nil)
	if llm.KindOf(err) != llm.ErrNoKey || msg.StopReason != llm.StopError ||
		!strings.Contains(err.Error(), "openai") || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("no key: %v", err)
	}
}

func TestBuildEntriesKeyPrecedence(t *testing.T) {
	cases := []struct {
		name   string
		cfg    map[string]openai.ProviderConfig
		cli    map[string]string
		env    map[string]string
		source string
		key    string
	}{
		{"env preset var", nil, nil, map[string]string{"OPENROUTER_API_KEY": "k-env"}, "env", "k-env"},
		{"ama var over preset var", nil, nil,
			map[string]string{"OPENROUTER_API_KEY": "k-env", "AMA_API_KEY_OPENROUTER": "k-ama"}, "env", "k-ama"},
		{"apiKeyEnv over both", map[string]openai.ProviderConfig{"openrouter": {APIKeyEnv: "MY_OR_KEY"}}, nil,
			map[string]string{"OPENROUTER_API_KEY": "k-env", "AMA_API_KEY_OPENROUTER": "k-ama", "MY_OR_KEY": "k-mine"}, "env", "k-mine"},
		{"config over env", map[string]openai.ProviderConfig{"openrouter": {APIKey: "k-config"}}, nil,
			map[string]string{"OPENROUTER_API_KEY": "k-env"}, "config", "k-config"},
		{"cli over config", map[string]openai.ProviderConfig{"openrouter": {APIKey: "k-config"}},
			map[string]string{"openrouter": "k-cli"}, map[string]string{"OPENROUTER_API_KEY": "k-env"}, "cli", "k-cli"},
		{"none", nil, map[string]string{"openai": "other"}, nil, "none", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entries, err := openai.BuildEntries(c.cfg, c.cli, envOf(c.env), nil)
			if err != nil {
				t.Fatal(err)
			}
			e := entry(t, entries, "openrouter")
			if e.KeySource != c.source || e.HasKey != (c.key != "") {
				t.Errorf("source %s hasKey %t, want %s %t", e.KeySource, e.HasKey, c.source, c.key != "")
			}
			// The key only shows up as the bearer token.
			s := newServer(t, replay(sse(text("ok"), finish("stop"), "[DONE]")))
			cfg := map[string]openai.ProviderConfig{}
			for k, v := range c.cfg {
				cfg[k] = v
			}
			pc := cfg["openrouter"]
			pc.BaseURL = s.URL + "/v1"
			cfg["openrouter"] = pc
			entries, err = openai.BuildEntries(cfg, c.cli, envOf(c.env), s.Client())
			if err != nil {
				t.Fatal(err)
			}
			e = entry(t, entries, "openrouter")
			_, err = e.Provider.Stream(context.Background(), &llm.Request{Model: &llm.Model{Provider: "openrouter", ID: "x/y"}}, nil)
			if c.key == "" {
				if llm.KindOf(err) != llm.ErrNoKey {
					t.Errorf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h := s.lastHeader(t).Get("Authorization"); h != "Bearer "+c.key {
				t.Errorf("Authorization = %q", h)
			}
		})
	}
}

func TestOpenAIBaseURLEnv(t *testing.T) {
	s := newServer(t, replay(sse(text("hi from local"), finish("stop"), usage(5, 0, 3), "[DONE]")))
	env := map[string]string{"OPENAI_BASE_URL": s.URL + "/v1/", "OPENAI_API_KEY": secret}
	entries, err := openai.BuildEntries(nil, nil, envOf(env), s.Client())
	if err != nil {
		t.Fatal(err)
	}
	oa := entry(t, entries, "openai")
	if !oa.OpenModels || len(oa.Models) != 0 || !oa.HasKey || oa.KeySource != "env" {
		t.Errorf("openai with base URL: open %t models %d hasKey %t source %s", oa.OpenModels, len(oa.Models), oa.HasKey, oa.KeySource)
	}
	m, pe, err := llm.NewRegistry(entries...).Find("openai", "qwen2.5-coder:7b")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := pe.Provider.Stream(context.Background(), &llm.Request{Model: m, MaxTokens: 100, ThinkingLevel: "high"}, nil)
	if err != nil || msg.Text("") != "hi from local" {
		t.Fatalf("reply %q err %v", msg.Text(""), err)
	}
	body := decode(t, s.lastBody(t))
	if body["model"] != "qwen2.5-coder:7b" || body["max_tokens"] != float64(100) || body["reasoning_effort"] != nil {
		t.Errorf("body = %v", body)
	}
	if h := s.lastHeader(t).Get("Authorization"); h != "Bearer "+secret {
		t.Errorf("Authorization = %q", h)
	}

	// Without a key the custom endpoint is still usable.
	entries, err = openai.BuildEntries(nil, nil, envOf(map[string]string{"OPENAI_BASE_URL": s.URL + "/v1"}), s.Client())
	if err != nil {
		t.Fatal(err)
	}
	oa = entry(t, entries, "openai")
	if !oa.HasKey || oa.KeySource != "none" {
		t.Errorf("keyless custom openai: hasKey %t source %s", oa.HasKey, oa.KeySource)
	}
	if _, err := oa.Provider.Stream(context.Background(), &llm.Request{Model: &llm.Model{Provider: "openai", ID: "m"}}, nil); err != nil {
		t.Error(err)
	}
}

func TestBuildEntriesUserConfig(t *testing.T) {
	raw := `{"providers": {
	  "local": {"baseUrl": "http://127.0.0.1:9999/v1", "headers": {"X-Team": "a"},
	    "models": [{"id": "qwen3", "name": "Qwen 3", "contextWindow": 32768, "maxTokens": 4096, "reasoning": true,
	      "input": ["text"], "prices": {"input": 0.5, "output": 1, "cacheRead": 0.05, "cacheWrite": 0}}]},
	  "corp": {"baseUrl": "https://llm.corp.example/v1", "apiKeyEnv": "CORP_KEY", "reasoningEffort": true},
	  "deepseek": {"models": [{"id": "deepseek-chat", "maxTokens": 4000}, {"id": "deepseek-v4", "reasoning": true}]},
	  "broken": {"apiKey": "sk-broken-1234567890"},
	  "bad/id": {"baseUrl": "http://x"}
	}}`
	var cfg openai.Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	entries, err := openai.BuildEntries(cfg.Providers, nil, envOf(nil), nil)
	if err == nil || !strings.Contains(err.Error(), "broken") || !strings.Contains(err.Error(), "bad/id") {
		t.Errorf("err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "sk-broken") {
		t.Error("config error contains the key")
	}
	local := entry(t, entries, "local")
	if !local.HasKey || local.KeySource != "none" || !local.OpenModels || local.Name != "local" {
		t.Errorf("local = %+v", local)
	}
	if len(local.Models) != 1 {
		t.Fatalf("local models = %+v", local.Models)
	}
	q := local.Models[0]
	if q.Provider != "local" || q.Name != "Qwen 3" || q.ContextWindow != 32768 || q.MaxTokens != 4096 || !q.Reasoning ||
		len(q.Input) != 1 || q.Prices.Input != 0.5 || q.Prices.CacheRead != 0.05 || q.API != openai.API {
		t.Errorf("qwen3 = %+v", q)
	}
	corp := entry(t, entries, "corp")
	if corp.HasKey || corp.KeySource != "none" {
		t.Errorf("corp without CORP_KEY: hasKey %t", corp.HasKey)
	}
	_, err = corp.Provider.Stream(context.Background(), &llm.Request{Model: &llm.Model{Provider: "corp", ID: "m"}}, nil)
	if llm.KindOf(err) != llm.ErrNoKey || !strings.Contains(err.Error(), "CORP_KEY") || !strings.Contains(err.Error(), "corp") {
		t.Errorf("corp no key: %v", err)
	}
	ds := entry(t, entries, "deepseek")
	if len(ds.Models) != 3 || ds.Models[0].MaxTokens != 4000 || ds.Models[0].Prices.Input == 0 || ds.Models[2].ID != "deepseek-v4" || !ds.Models[2].Reasoning {
		t.Errorf("deepseek merged = %+v %+v %+v", *ds.Models[0], *ds.Models[1], *ds.Models[2])
	}
	// User providers come after the presets, sorted by id.
	n := len(openai.Presets())
	if entries[n].ID != "corp" || entries[n+1].ID != "local" {
		t.Errorf("order: %s %s", entries[n].ID, entries[n+1].ID)
	}
}

func TestEntriesPrintWithoutKeys(t *testing.T) {
	cfg := map[string]openai.ProviderConfig{"openai": {APIKey: secret}, "mine": {BaseURL: "http://127.0.0.1:1/v1", APIKey: secret}}
	entries, err := openai.BuildEntries(cfg, map[string]string{"groq": secret}, envOf(map[string]string{"DEEPSEEK_API_KEY": secret}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
			if out := fmt.Sprintf(f, e); strings.Contains(out, secret) {
				t.Errorf("%s of %s prints the key: %s", f, e.ID, out)
			}
			if out := fmt.Sprintf(f, *e); strings.Contains(out, secret) {
				t.Errorf("%s of *%s prints the key: %s", f, e.ID, out)
			}
		}
		if out, _ := json.Marshal(e); strings.Contains(string(out), secret) {
			t.Errorf("JSON of %s has the key", e.ID)
		}
	}
	for _, f := range []string{"%v", "%+v", "%#v"} {
		if out := fmt.Sprintf(f, cfg); strings.Contains(out, secret) {
			t.Errorf("%s of the config prints the key: %s", f, out)
		}
	}
}

func TestEnvKeyVar(t *testing.T) {
	for id, want := range map[string]string{"openai": "AMA_API_KEY_OPENAI", "my-llm.v2": "AMA_API_KEY_MY_LLM_V2", "LM9": "AMA_API_KEY_LM9"} {
		if got := openai.EnvKeyVar(id); got != want {
			t.Errorf("EnvKeyVar(%q) = %q", id, got)
		}
	}
}

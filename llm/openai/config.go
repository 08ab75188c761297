package openai

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/armadra/ama-rpc/llm"
)

// Config is the "providers" section of the user config:
//
//	{"providers": {"<id>": {"baseUrl": "...", "apiKey": "...", "apiKeyEnv": "...",
//	  "headers": {...}, "models": [{"id", "name", "contextWindow", "maxTokens",
//	  "reasoning", "input": ["text","image"], "prices": {"input","output","cacheRead","cacheWrite"}}]}}}
type Config struct {
	Providers map[string]ProviderConfig `json:"providers,omitempty"`
}

// ProviderConfig configures one provider: a preset (same id) is adjusted,
// any other id defines a new OpenAI-compatible endpoint.
type ProviderConfig struct {
	Name    string `json:"name,omitempty"`
	BaseURL string `json:"baseUrl,omitempty"`
	// APIKey is the key itself (prefer APIKeyEnv); APIKeyEnv names the
	// variable holding it. Either makes the provider require a key.
	APIKey    string            `json:"apiKey,omitempty"`
	APIKeyEnv string            `json:"apiKeyEnv,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Models    []ModelConfig     `json:"models,omitempty"`
	// ReasoningEffort sends reasoning_effort to this endpoint (default:
	// the preset's setting; false for user-defined endpoints).
	ReasoningEffort *bool `json:"reasoningEffort,omitempty"`
}

// String describes the config without the key or header values.
func (c ProviderConfig) String() string {
	return fmt.Sprintf("openai.ProviderConfig{BaseURL:%q APIKeyEnv:%q HasAPIKey:%t Models:%d}",
		c.BaseURL, c.APIKeyEnv, c.APIKey != "", len(c.Models))
}

// GoString is String.
func (c ProviderConfig) GoString() string { return c.String() }

// ModelConfig describes one model. For a model a preset already knows,
// the fields given replace the preset's values.
type ModelConfig struct {
	ID            string      `json:"id"`
	Name          string      `json:"name,omitempty"`
	ContextWindow int         `json:"contextWindow,omitempty"`
	MaxTokens     int         `json:"maxTokens,omitempty"`
	Reasoning     *bool       `json:"reasoning,omitempty"`
	Input         []string    `json:"input,omitempty"`
	Prices        *llm.Prices `json:"prices,omitempty"`
	// PromptCache declares the model's prompt-cache TTLs (seconds) and
	// minimum cacheable prompt; it enables cache warming.
	PromptCache *llm.PromptCache `json:"promptCache,omitempty"`
}

// EnvKeyVar returns the ama-specific key variable of a provider:
// AMA_API_KEY_ and the id in upper case, other characters than letters and
// digits becoming "_".
func EnvKeyVar(id string) string {
	var sb strings.Builder
	sb.WriteString("AMA_API_KEY_")
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z':
			sb.WriteRune(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		default:
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

// BuildEntries returns the registry entries of the presets (in Presets
// order) followed by the user-defined providers of cfg (sorted by id).
//
// Keys resolve by precedence: cliKeys[id], the config's apiKey, then the
// environment: the config's apiKeyEnv, AMA_API_KEY_<ID>, the preset's
// variable. KeySource is cli, config, env or none; HasKey is true when a
// key resolved or the provider needs none. A provider that needs a key and
// has none is still listed; its Stream fails with llm.ErrNoKey.
//
// A custom base URL (config baseUrl or the preset's base URL variable, e.g.
// OPENAI_BASE_URL) makes the catalogue open: any model id is accepted and
// gets Template's settings. For the openai preset it also drops the OpenAI
// model list, makes the key optional and stops sending OpenAI-only
// parameters, so two variables point ama at any OpenAI-compatible server.
//
// env nil means os.Getenv; httpClient nil means a plain http.Client. Config
// errors (a user provider without baseUrl, a model without id, a bad URL)
// are joined into err; the entries of every valid provider are returned
// anyway.
func BuildEntries(cfg map[string]ProviderConfig, cliKeys map[string]string, env func(string) string, httpClient *http.Client) ([]*llm.ProviderEntry, error) {
	return BuildEntriesWith(cfg, cliKeys, env, httpClient, Limits{})
}

// BuildEntriesWith is BuildEntries with the stream limits of every
// provider (the config's modelStream).
func BuildEntriesWith(cfg map[string]ProviderConfig, cliKeys map[string]string, env func(string) string, httpClient *http.Client, limits Limits) ([]*llm.ProviderEntry, error) {
	if env == nil {
		env = os.Getenv
	}
	var entries []*llm.ProviderEntry
	var errs []error
	known := map[string]bool{}
	for _, ps := range Presets() {
		known[ps.ID] = true
		e, err := buildEntry(ps, cfg[ps.ID], cliKeys, env, httpClient, limits)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		entries = append(entries, e)
	}
	ids := make([]string, 0, len(cfg))
	for id := range cfg {
		if !known[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		pc := cfg[id]
		if id == "" || strings.ContainsAny(id, "/ \t\n") {
			errs = append(errs, fmt.Errorf("provider %q: invalid id", id))
			continue
		}
		if pc.BaseURL == "" {
			errs = append(errs, fmt.Errorf("provider %s: baseUrl is required", id))
			continue
		}
		name := pc.Name
		if name == "" {
			name = id
		}
		ps := Preset{ID: id, Name: name, NeedsKey: pc.APIKey != "" || pc.APIKeyEnv != "",
			OpenModels: true, Template: defaultTemplate(false)}
		e, err := buildEntry(ps, pc, cliKeys, env, httpClient, limits)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		entries = append(entries, e)
	}
	return entries, errors.Join(errs...)
}

func buildEntry(ps Preset, pc ProviderConfig, cliKeys map[string]string, env func(string) string, hc *http.Client, limits Limits) (*llm.ProviderEntry, error) {
	id := ps.ID
	base := ps.BaseURL
	if ps.BaseURLEnv != "" {
		if v := strings.TrimSpace(env(ps.BaseURLEnv)); v != "" {
			base = v
		}
	}
	if pc.BaseURL != "" {
		base = pc.BaseURL
	}
	base = strings.TrimRight(base, "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider %s: invalid base URL %q", id, base)
	}
	custom := ps.BaseURL == "" || base != strings.TrimRight(ps.BaseURL, "/")

	opts := Options{
		ID: id, BaseURL: base, HTTPClient: hc, Limits: limits,
		NeedsKey:            ps.NeedsKey || pc.APIKey != "" || pc.APIKeyEnv != "",
		ReasoningEffort:     ps.ReasoningEffort,
		Efforts:             ps.Efforts,
		MaxCompletionTokens: ps.MaxCompletionTokens,
	}
	models := ps.Models
	open := ps.OpenModels || custom
	if custom && ps.generic {
		models = nil
		opts.NeedsKey = pc.APIKey != "" || pc.APIKeyEnv != ""
		opts.ReasoningEffort, opts.Efforts, opts.MaxCompletionTokens = false, nil, false
	}
	if pc.ReasoningEffort != nil {
		opts.ReasoningEffort = *pc.ReasoningEffort
	}

	// Key: cli > config > env.
	keyEnvs := []string{}
	if pc.APIKeyEnv != "" {
		keyEnvs = append(keyEnvs, pc.APIKeyEnv)
	}
	keyEnvs = append(keyEnvs, EnvKeyVar(id))
	if ps.KeyEnv != "" && ps.KeyEnv != pc.APIKeyEnv {
		keyEnvs = append(keyEnvs, ps.KeyEnv)
	}
	switch {
	case cliKeys[id] != "":
		opts.APIKey, opts.KeySource = cliKeys[id], KeySourceCLI
	case pc.APIKey != "":
		opts.APIKey, opts.KeySource = pc.APIKey, KeySourceConfig
	default:
		opts.KeySource = KeySourceNone
		for _, name := range keyEnvs {
			if v := strings.TrimSpace(env(name)); v != "" {
				opts.APIKey, opts.KeySource, opts.KeyEnv = v, KeySourceEnv, name
				break
			}
		}
	}
	// Suggest the conventional variable first, the ama one after it.
	opts.KeyEnvs = make([]string, 0, len(keyEnvs))
	for _, name := range keyEnvs {
		if name != EnvKeyVar(id) {
			opts.KeyEnvs = append(opts.KeyEnvs, name)
		}
	}
	opts.KeyEnvs = append(opts.KeyEnvs, EnvKeyVar(id))

	headers := map[string]string{}
	for k, v := range ps.Headers {
		headers[k] = v
	}
	for k, v := range pc.Headers {
		headers[k] = v
	}
	opts.Headers = headers

	merged, err := mergeModels(id, models, pc.Models, ps.Template)
	if err != nil {
		return nil, err
	}
	tmpl := ps.Template
	tmpl.Provider, tmpl.API = id, API
	tmpl.Input = append([]string(nil), tmpl.Input...)

	name := ps.Name
	if pc.Name != "" {
		name = pc.Name
	}
	return &llm.ProviderEntry{
		ID: id, Name: name, Provider: New(opts), Models: merged,
		KeySource: opts.KeySource, HasKey: opts.APIKey != "" || !opts.NeedsKey,
		OpenModels: open, Template: tmpl, BaseURL: base,
	}, nil
}

// mergeModels applies the config's models to the preset's: a known id is
// updated field by field, a new id is appended with tmpl's defaults.
func mergeModels(provider string, preset []llm.Model, cfg []ModelConfig, tmpl llm.Model) ([]*llm.Model, error) {
	out := make([]*llm.Model, 0, len(preset)+len(cfg))
	index := map[string]int{}
	for _, m := range preset {
		m := m
		m.Provider, m.API = provider, API
		m.Input = append([]string(nil), m.Input...)
		index[m.ID] = len(out)
		out = append(out, &m)
	}
	for i, mc := range cfg {
		if mc.ID == "" {
			return nil, fmt.Errorf("provider %s: model %d has no id", provider, i)
		}
		m, ok := (*llm.Model)(nil), false
		if j, found := index[mc.ID]; found {
			m, ok = out[j], true
		} else {
			t := tmpl
			t.Provider, t.API, t.ID, t.Name = provider, API, mc.ID, mc.ID
			t.Input = append([]string(nil), t.Input...)
			m = &t
		}
		if mc.Name != "" {
			m.Name = mc.Name
		}
		if mc.ContextWindow > 0 {
			m.ContextWindow = mc.ContextWindow
		}
		if mc.MaxTokens > 0 {
			m.MaxTokens = mc.MaxTokens
		}
		if mc.Reasoning != nil {
			m.Reasoning = *mc.Reasoning
		}
		if len(mc.Input) > 0 {
			for _, in := range mc.Input {
				if in != "text" && in != "image" {
					return nil, fmt.Errorf("provider %s: model %s: unknown input %q", provider, mc.ID, in)
				}
			}
			m.Input = append([]string(nil), mc.Input...)
		}
		if mc.Prices != nil {
			m.Prices = *mc.Prices
		}
		if mc.PromptCache != nil {
			pc := *mc.PromptCache
			m.PromptCache = &pc
		}
		if !ok {
			index[mc.ID] = len(out)
			out = append(out, m)
		}
	}
	return out, nil
}

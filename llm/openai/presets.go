package openai

import "github.com/armadra/ama-rpc/llm"

// Preset is a built-in OpenAI-compatible endpoint.
type Preset struct {
	ID   string
	Name string
	// BaseURL is the default endpoint; BaseURLEnv, when set in the
	// environment, replaces it (the config's baseUrl wins over both).
	BaseURL    string
	BaseURLEnv string
	// KeyEnv is the conventional key variable ("" when there is none).
	KeyEnv string
	// NeedsKey says a request without a key cannot succeed.
	NeedsKey bool
	// OpenModels accepts any model id even at the default URL (routers and
	// local servers); otherwise only a custom base URL opens the catalogue.
	OpenModels bool
	// ReasoningEffort and Efforts: see Options.
	ReasoningEffort bool
	Efforts         map[string]string
	// MaxCompletionTokens: see Options.
	MaxCompletionTokens bool
	Headers             map[string]string
	// Models are the known models; Template describes any other id of an
	// open catalogue.
	Models   []llm.Model
	Template llm.Model

	// generic: a custom base URL turns this preset into "some
	// OpenAI-compatible server": its models are dropped, the key becomes
	// optional and only plain max_tokens is sent (OPENAI_BASE_URL).
	generic bool
}

// defaultTemplate describes a model of an open catalogue nobody configured.
func defaultTemplate(reasoning bool) llm.Model {
	return llm.Model{API: API, Reasoning: reasoning, Input: []string{"text", "image"}, ContextWindow: 128_000, MaxTokens: 16_384}
}

func model(id, name string, reasoning bool, input []string, ctx, maxTok int, p llm.Prices) llm.Model {
	return llm.Model{ID: id, Name: name, API: API, Reasoning: reasoning, Input: input, ContextWindow: ctx, MaxTokens: maxTok, Prices: p}
}

// cached sets the provider's documented prompt-cache TTLs (seconds) and
// minimum cacheable prompt on models.
func cached(short, long, minTokens int, models ...llm.Model) []llm.Model {
	for i := range models {
		models[i].PromptCache = &llm.PromptCache{Short: short, Long: long, MinTokens: minTokens}
	}
	return models
}

var (
	textImage = []string{"text", "image"}
	textOnly  = []string{"text"}
)

// Presets returns the built-in endpoints (fresh values on every call).
// Prices are USD per million tokens as published when the preset was
// written; a model entry in the user config overrides them.
func Presets() []Preset {
	return []Preset{
		{
			ID: "openai", Name: "OpenAI", BaseURL: "https://api.openai.com/v1", BaseURLEnv: "OPENAI_BASE_URL",
			KeyEnv: "OPENAI_API_KEY", NeedsKey: true, ReasoningEffort: true, MaxCompletionTokens: true,
			// "minimal" and "xhigh" exist only for some OpenAI models;
			// the neighbouring levels are accepted by all reasoning models.
			Efforts: map[string]string{"minimal": "low", "xhigh": "high"},
			Models: cached(300, 86_400, 1024,
				model("gpt-4o", "GPT-4o", false, textImage, 128_000, 16_384, llm.Prices{Input: 2.5, Output: 10, CacheRead: 1.25}),
				model("gpt-4o-mini", "GPT-4o mini", false, textImage, 128_000, 16_384, llm.Prices{Input: 0.15, Output: 0.6, CacheRead: 0.075}),
				model("gpt-4.1", "GPT-4.1", false, textImage, 1_047_576, 32_768, llm.Prices{Input: 2, Output: 8, CacheRead: 0.5}),
				model("gpt-4.1-mini", "GPT-4.1 mini", false, textImage, 1_047_576, 32_768, llm.Prices{Input: 0.4, Output: 1.6, CacheRead: 0.1}),
				model("o3", "o3", true, textImage, 200_000, 100_000, llm.Prices{Input: 2, Output: 8, CacheRead: 0.5}),
				model("o4-mini", "o4-mini", true, textImage, 200_000, 100_000, llm.Prices{Input: 1.1, Output: 4.4, CacheRead: 0.275}),
				model("gpt-5", "GPT-5", true, textImage, 400_000, 128_000, llm.Prices{Input: 1.25, Output: 10, CacheRead: 0.125}),
				model("gpt-5-mini", "GPT-5 mini", true, textImage, 400_000, 128_000, llm.Prices{Input: 0.25, Output: 2, CacheRead: 0.025}),
			),
			Template: defaultTemplate(false),
			generic:  true,
		},
		{
			ID: "openrouter", Name: "OpenRouter", BaseURL: "https://openrouter.ai/api/v1",
			KeyEnv: "OPENROUTER_API_KEY", NeedsKey: true, OpenModels: true,
			// OpenRouter normalises reasoning_effort (all levels) per model.
			ReasoningEffort: true,
			Template:        defaultTemplate(true),
		},
		{
			ID: "deepseek", Name: "DeepSeek", BaseURL: "https://api.deepseek.com/v1",
			KeyEnv: "DEEPSEEK_API_KEY", NeedsKey: true,
			Models: cached(3600, 0, 2048,
				model("deepseek-chat", "DeepSeek Chat", false, textOnly, 128_000, 8_192,
					llm.Prices{Input: 0.28, Output: 0.42, CacheRead: 0.028}),
				model("deepseek-reasoner", "DeepSeek Reasoner", true, textOnly, 128_000, 64_000,
					llm.Prices{Input: 0.28, Output: 0.42, CacheRead: 0.028}),
			),
			Template: defaultTemplate(false),
		},
		{
			ID: "groq", Name: "Groq", BaseURL: "https://api.groq.com/openai/v1",
			KeyEnv: "GROQ_API_KEY", NeedsKey: true, OpenModels: true, Template: defaultTemplate(false),
		},
		{
			ID: "together", Name: "Together AI", BaseURL: "https://api.together.xyz/v1",
			KeyEnv: "TOGETHER_API_KEY", NeedsKey: true, OpenModels: true, Template: defaultTemplate(false),
		},
		{
			ID: "ollama", Name: "Ollama", BaseURL: "http://127.0.0.1:11434/v1",
			OpenModels: true, Template: defaultTemplate(false),
		},
		{
			ID: "lmstudio", Name: "LM Studio", BaseURL: "http://127.0.0.1:1234/v1",
			OpenModels: true, Template: defaultTemplate(false),
		},
		{
			ID: "vllm", Name: "vLLM", BaseURL: "http://127.0.0.1:8000/v1", BaseURLEnv: "VLLM_BASE_URL",
			KeyEnv: "VLLM_API_KEY", OpenModels: true, Template: defaultTemplate(false),
		},
	}
}

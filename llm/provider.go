package llm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Model describes one model of a provider.
type Model struct {
	Provider      string   `json:"provider"`
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	API           string   `json:"api"`
	Reasoning     bool     `json:"reasoning"`
	Input         []string `json:"input"`
	ContextWindow int      `json:"contextWindow,omitempty"`
	MaxTokens     int      `json:"maxTokens"`
	Prices        Prices   `json:"prices"`
	// PromptCache is the provider's prompt-cache catalog entry (nil: no
	// TTL is known, so no cache warming).
	PromptCache *PromptCache `json:"promptCache,omitempty"`
}

// PromptCache describes a model's prompt cache: TTLs in seconds for the
// short and long retention (0: none) and the smallest cacheable prompt.
type PromptCache struct {
	Short     int `json:"short,omitempty"`
	Long      int `json:"long,omitempty"`
	MinTokens int `json:"minTokens,omitempty"`
}

// Ref returns "provider/id".
func (m *Model) Ref() string { return m.Provider + "/" + m.ID }

// Purposes of a model request.
const (
	PurposeTurn     = "turn"
	PurposeCompact  = "compact"
	PurposeClassify = "classify"
	PurposeSummary  = "summary"
)

// Request is one model call.
type Request struct {
	Model *Model
	// System is the rendered system prompt.
	System string
	// Messages is the projected context (user, assistant, toolResult and the
	// extension roles, which providers send as user messages).
	Messages []Message
	Tools    []ToolDecl
	// ThinkingLevel is off, minimal, low, medium, high or xhigh.
	ThinkingLevel string
	// MaxTokens caps the reply; 0 means the model's default.
	MaxTokens int
	Purpose   string
	SessionID string
	// Timestamp is the epoch-ms timestamp given to the reply message.
	Timestamp int64
}

// Provider streams model replies. Stream reports progress through emit (on
// the calling goroutine, in order) and returns the final message. The
// message is never nil: on failure it has StopReason "error" or "aborted"
// and ErrorMessage set, and the error describes the failure (*Error).
type Provider interface {
	Stream(ctx context.Context, req *Request, emit func(StreamEvent, *AssistantMessage)) (*AssistantMessage, error)
}

// ErrorKind classifies provider failures.
type ErrorKind string

// Failure kinds.
const (
	ErrRateLimit  ErrorKind = "rate_limit"
	ErrOverloaded ErrorKind = "overloaded"
	ErrServer     ErrorKind = "server"
	ErrAuth       ErrorKind = "auth"
	ErrOverflow   ErrorKind = "overflow"
	ErrNetwork    ErrorKind = "network"
	ErrDisconnect ErrorKind = "disconnect"
	ErrAborted    ErrorKind = "aborted"
	ErrNoKey      ErrorKind = "no_api_key"
	ErrInvalid    ErrorKind = "invalid_request"
	ErrOther      ErrorKind = "other"
	// ErrTooLarge: the reply broke a size bound of the stream reader (a
	// line of the event stream, or the whole reply). Not retried: the
	// endpoint would send the same again.
	ErrTooLarge ErrorKind = "too_large"
)

// Error is a classified provider failure.
type Error struct {
	Kind       ErrorKind
	Status     int
	Message    string
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

// Retryable reports whether a retry may succeed.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimit, ErrOverloaded, ErrServer, ErrNetwork, ErrDisconnect:
		return true
	}
	return false
}

// KindOf returns the kind of err (ErrAborted for context cancellation,
// ErrOther for unclassified errors, "" for nil).
func KindOf(err error) ErrorKind {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	if errors.Is(err, context.Canceled) {
		return ErrAborted
	}
	return ErrOther
}

// ModelRef identifies a model on the wire.
type ModelRef struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	Channel  string `json:"channel,omitempty"`
}

// ProviderEntry is one provider of a Registry.
type ProviderEntry struct {
	ID       string
	Name     string
	Provider Provider
	Models   []*Model
	// KeySource says where the key came from: cli, config, env, none...
	KeySource string
	HasKey    bool
	// OpenModels accepts any model id (an OpenAI-compatible endpoint with a
	// custom base URL); unknown ids get Template's settings.
	OpenModels bool
	Template   Model
	// BaseURL is the endpoint (its host keys the cache reporting state).
	BaseURL string
}

// Registry is the model catalogue. It is immutable after construction.
type Registry struct {
	entries []*ProviderEntry
}

// Lookup errors.
var (
	ErrProviderNotFound = errors.New("provider not found")
	ErrModelNotFound    = errors.New("model not found")
)

// ErrInvalidConfig is wrapped by a provider's errors about its own
// configuration given by the user (the fake provider's script): the
// caller's arguments are wrong, not the model. The wire layers map it to
// invalid arguments without knowing any provider.
var ErrInvalidConfig = errors.New("invalid provider configuration")

// NewRegistry returns a registry of the given providers (in order).
func NewRegistry(entries ...*ProviderEntry) *Registry {
	return &Registry{entries: entries}
}

// Providers returns the entries in registration order.
func (r *Registry) Providers() []*ProviderEntry { return r.entries }

// Provider returns the entry with the given id.
func (r *Registry) Provider(id string) (*ProviderEntry, error) {
	for _, e := range r.entries {
		if e.ID == id {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrProviderNotFound, id)
}

// Find returns the model provider/id.
func (r *Registry) Find(provider, id string) (*Model, *ProviderEntry, error) {
	e, err := r.Provider(provider)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range e.Models {
		if m.ID == id {
			return m, e, nil
		}
	}
	if e.OpenModels && id != "" {
		m := e.Template
		m.Provider, m.ID = e.ID, id
		if m.Name == "" {
			m.Name = id
		}
		return &m, e, nil
	}
	return nil, nil, fmt.Errorf("%w: %s/%s", ErrModelNotFound, provider, id)
}

// ParseRef splits "provider/id" (the id may contain further slashes).
func ParseRef(s string) (provider, id string, ok bool) {
	provider, id, ok = strings.Cut(s, "/")
	if !ok || provider == "" || id == "" {
		return "", "", false
	}
	return provider, id, true
}

// ThinkingLevels are all levels, weakest first.
var ThinkingLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh"}

// ValidThinkingLevel reports whether s is a known level.
func ValidThinkingLevel(s string) bool {
	i := sort.SearchStrings(sortedLevels, s)
	return i < len(sortedLevels) && sortedLevels[i] == s
}

var sortedLevels = func() []string {
	s := append([]string(nil), ThinkingLevels...)
	sort.Strings(s)
	return s
}()

// LevelsFor returns the thinking levels a model supports.
func LevelsFor(m *Model) []string {
	if m == nil || !m.Reasoning {
		return []string{"off"}
	}
	return append([]string(nil), ThinkingLevels...)
}

// Sleep waits d or until ctx ends (ctx's error then). It is the default
// wait of retries and scripted delays; tests inject their own.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

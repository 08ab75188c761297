package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/armadra/ama-rpc/llm"
)

// API is the api id recorded on the messages this provider produces.
const API = "openai-completions"

// Key sources reported in llm.ProviderEntry.KeySource.
const (
	KeySourceCLI    = "cli"
	KeySourceConfig = "config"
	KeySourceEnv    = "env"
	KeySourceNone   = "none"
)

// emptyLineLimit replaces go-openai's default of 300 non-data lines between
// two events: routers such as OpenRouter send SSE comment keep-alives while a
// slow model thinks, and those count as "empty messages".
const emptyLineLimit = 100_000

// Options configure one Provider. The zero value of every field is usable
// except BaseURL.
type Options struct {
	// ID is the provider id ("openai", "openrouter", ...); errors name it.
	ID string
	// BaseURL is the API root that "/chat/completions" is appended to.
	BaseURL string
	// APIKey is sent as a bearer token when not empty. It is never logged
	// and never appears in error texts.
	APIKey string
	// KeySource says where APIKey came from (KeySource* constants) and
	// KeyEnv names the environment variable when the source is env; auth
	// errors report both. Empty means config when APIKey is set, else none.
	KeySource string
	KeyEnv    string
	// NeedsKey makes Stream fail with llm.ErrNoKey before any request when
	// APIKey is empty; KeyEnvs are the variables the message suggests.
	NeedsKey bool
	KeyEnvs  []string
	// Headers are added to every request (they replace headers of the same
	// name, Authorization included).
	Headers map[string]string
	// HTTPClient performs the requests; nil means a plain &http.Client{}.
	// It must not have a Timeout shorter than a reply: cancellation comes
	// from the Stream context.
	HTTPClient *http.Client
	// ReasoningEffort sends reasoning_effort for reasoning models when the
	// thinking level is not off. Efforts maps a thinking level to the value
	// sent; levels missing from the map are sent unchanged.
	ReasoningEffort bool
	Efforts         map[string]string
	// MaxCompletionTokens sends the reply cap as max_completion_tokens
	// (OpenAI) instead of max_tokens. Model ids of OpenAI reasoning models
	// (o1, o3, o4, gpt-5, gpt-6 prefixes) always use max_completion_tokens.
	MaxCompletionTokens bool
	// Limits bound what one reply may cost (zero fields: the defaults).
	Limits Limits
}

// String describes the options without the key or header values.
func (o Options) String() string {
	return fmt.Sprintf("openai.Options{ID:%q BaseURL:%q KeySource:%q HasKey:%t}", o.ID, o.BaseURL, o.KeySource, o.APIKey != "")
}

// GoString is String, so %#v cannot print the key either.
func (o Options) GoString() string { return o.String() }

// Provider streams chat completions from one OpenAI-compatible endpoint. It
// is immutable after New and safe for concurrent Stream calls.
type Provider struct {
	opts Options
	http *http.Client
	// reference streams with go-openai's RecvRaw and encoding/json only,
	// as before the fast path: the other side of the differential tests.
	reference bool
	// clock drives the idle timeout (nil: the system's; the tests' own
	// through export_test.go).
	clock clock
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider for o. Maps and slices of o are copied.
func New(o Options) *Provider {
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	o.Headers = copyMap(o.Headers)
	o.Efforts = copyMap(o.Efforts)
	o.KeyEnvs = append([]string(nil), o.KeyEnvs...)
	if o.KeySource == "" {
		o.KeySource = KeySourceNone
		if o.APIKey != "" {
			o.KeySource = KeySourceConfig
		}
	}
	o.HTTPClient = nil
	o.Limits = o.Limits.withDefaults()
	return &Provider{opts: o, http: hc}
}

// ID returns the provider id.
func (p *Provider) ID() string { return p.opts.ID }

// BaseURL returns the endpoint root.
func (p *Provider) BaseURL() string { return p.opts.BaseURL }

// String describes the provider without its key.
func (p *Provider) String() string {
	return fmt.Sprintf("openai provider %s (%s)", p.opts.ID, p.opts.BaseURL)
}

// GoString is String.
func (p *Provider) GoString() string { return p.String() }

// Stream sends req as a streaming chat completion and assembles the reply
// with an llm.Builder, reporting every step through emit on the calling
// goroutine. Cancelling ctx cancels the HTTP request at once; the reply then
// ends with stopReason "aborted".
func (p *Provider) Stream(ctx context.Context, req *llm.Request, emit func(llm.StreamEvent, *llm.AssistantMessage)) (*llm.AssistantMessage, error) {
	if req == nil || req.Model == nil {
		e := &llm.Error{Kind: llm.ErrInvalid, Message: "openai: request without a model"}
		return &llm.AssistantMessage{Role: llm.RoleAssistant, Content: []llm.Content{}, API: API,
			Provider: p.opts.ID, StopReason: llm.StopError, ErrorMessage: e.Message}, e
	}
	b := llm.NewBuilder(req, API, emit)
	fail := func(err error) (*llm.AssistantMessage, error) {
		u := b.Message().Usage
		u.Finalize(req.Model.Prices)
		b.SetUsage(u)
		return b.Fail(err)
	}
	if p.opts.NeedsKey && p.opts.APIKey == "" {
		return fail(p.noKeyError())
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return fail(llm.Aborted())
	}

	// The request runs under its own context so that the idle timer can
	// end it without aborting the run: a cancel with cause errIdle.
	reqCtx, cancelReq := context.WithCancelCause(ctx)
	defer cancelReq(nil)
	lim := p.opts.Limits
	idle := newIdleTimer(lim.IdleTimeout, p.clock, func() { cancelReq(errIdle) })
	defer idle.stop()
	d := &doer{inner: p.http, headers: p.opts.Headers, idle: idle}
	// idleFail is the error of an attempt the idle timer ended.
	idleFail := func(started bool) (*llm.AssistantMessage, error) {
		kind := llm.ErrNetwork
		if started {
			kind = llm.ErrDisconnect
		}
		return fail(&llm.Error{Kind: kind, Status: d.status, Message: fmt.Sprintf(
			"%s: the endpoint sent nothing for %s (modelStream.idleTimeoutMs)", p.opts.ID, lim.IdleTimeout)})
	}
	idled := func() bool { return ctx.Err() == nil && errors.Is(context.Cause(reqCtx), errIdle) }
	cfg := goopenai.DefaultConfig(p.opts.APIKey)
	cfg.BaseURL = p.opts.BaseURL
	cfg.HTTPClient = d
	cfg.EmptyMessagesLimit = emptyLineLimit
	client := goopenai.NewClientWithConfig(cfg)

	stream, err := client.CreateChatCompletionStream(reqCtx, p.buildRequest(req))
	if err != nil {
		if idled() {
			return idleFail(false)
		}
		return fail(p.classify(ctx, err, d, false))
	}
	defer stream.Close()

	s := newStreamState(b, !p.reference)
	s.maxReply = lim.MaxReplyBytes
	recv := stream.RecvRaw
	if !p.reference && d.body != nil {
		// The body go-openai returned, not read yet: its streamReader
		// has only wrapped it in a bufio.Reader that stays unused.
		recv = newSSEReader(d.body, emptyLineLimit, lim.MaxLineBytes).next
	}
	for {
		raw, err := recv()
		if err != nil && idled() {
			return idleFail(s.sawChunk)
		}
		if errors.Is(err, errLineTooLong) {
			return fail(&llm.Error{Kind: llm.ErrTooLarge, Status: d.status, Message: fmt.Sprintf(
				"%s: a line of the reply's event stream is longer than %s (modelStream.maxLineBytes); not retried",
				p.opts.ID, sizeText(lim.MaxLineBytes))})
		}
		if err == io.EOF {
			if s.finish == "" && !d.sawDone() {
				if !s.sawChunk {
					return fail(&llm.Error{Kind: llm.ErrNetwork, Status: d.status,
						Message: p.opts.ID + ": connection closed before the reply started"})
				}
				return fail(&llm.Error{Kind: llm.ErrDisconnect, Status: d.status,
					Message: "stream closed before the reply was complete"})
			}
			break
		}
		if err != nil {
			if s.finish != "" && ctx.Err() == nil && isTransport(err) {
				// The reply is complete; only the trailing usage chunk was
				// lost with the connection.
				break
			}
			return fail(p.classify(ctx, err, d, s.sawChunk))
		}
		if raw == nil {
			// go-openai saw a `data: {"error":...}` event it could not decode.
			return fail(&llm.Error{Kind: llm.ErrServer, Status: d.status,
				Message: p.redact(p.opts.ID + ": the stream reported an error it could not describe")})
		}
		if err := s.handle(raw); err != nil {
			if errors.Is(err, errReplyTooLarge) {
				return fail(&llm.Error{Kind: llm.ErrTooLarge, Status: d.status, Message: fmt.Sprintf(
					"%s: the reply is longer than %s (modelStream.maxReplyBytes); not retried",
					p.opts.ID, sizeText(lim.MaxReplyBytes))})
			}
			return fail(p.classifyChunkError(err, d))
		}
	}
	reason, rawReason := s.stopReason()
	s.finalizeUsage(req.Model.Prices)
	m := b.Finish(reason)
	m.RawStopReason = rawReason
	return m, nil
}

func (p *Provider) noKeyError() *llm.Error {
	var hint string
	switch len(p.opts.KeyEnvs) {
	case 0:
		hint = "pass one on the command line or set apiKey in the provider config"
	case 1:
		hint = "set " + p.opts.KeyEnvs[0] + ", pass one on the command line, or set apiKey in the provider config"
	default:
		hint = "set " + p.opts.KeyEnvs[0] + " (or " + strings.Join(p.opts.KeyEnvs[1:], ", ") +
			"), pass one on the command line, or set apiKey in the provider config"
	}
	return &llm.Error{Kind: llm.ErrNoKey, Message: fmt.Sprintf("no API key for provider %s: %s", p.opts.ID, hint)}
}

// keySourceText describes where the key came from, never the key itself.
func (p *Provider) keySourceText() string {
	switch p.opts.KeySource {
	case KeySourceCLI:
		return "the key given on the command line"
	case KeySourceConfig:
		return "the apiKey from the config"
	case KeySourceEnv:
		if p.opts.KeyEnv != "" {
			return "the key from environment variable " + p.opts.KeyEnv
		}
		return "the key from the environment"
	}
	if p.opts.APIKey == "" {
		return "no API key (none configured)"
	}
	return "the key from " + p.opts.KeySource
}

// redact removes the key from s (servers sometimes echo it back).
func (p *Provider) redact(s string) string {
	if k := p.opts.APIKey; len(k) >= 4 && strings.Contains(s, k) {
		s = strings.ReplaceAll(s, k, "[redacted]")
	}
	return redactTokens(s)
}

// doer is the go-openai HTTPDoer of one Stream call: it adds the extra
// headers, remembers the response status and headers (go-openai's errors do
// not carry them, and Retry-After lives there) and watches the tail of the
// body to tell "data: [DONE]" from a connection that just ended.
type doer struct {
	inner   *http.Client
	headers map[string]string
	idle    *idleTimer
	status  int
	header  http.Header
	body    *tailBody
}

func (d *doer) Do(r *http.Request) (*http.Response, error) {
	for k, v := range d.headers {
		r.Header.Set(k, v)
	}
	d.idle.arm() // a server that never answers is as silent as one that stops
	resp, err := d.inner.Do(r)
	if err != nil {
		return nil, err
	}
	d.idle.touch()
	d.status, d.header = resp.StatusCode, resp.Header
	if resp.StatusCode < 400 {
		d.body = &tailBody{ReadCloser: resp.Body, idle: d.idle}
		resp.Body = d.body
	}
	return resp, nil
}

func (d *doer) sawDone() bool { return d.body != nil && d.body.sawDone() }

// tailBody keeps the last bytes read from a response body, and tells the
// idle timer when bytes arrive.
type tailBody struct {
	io.ReadCloser
	idle *idleTimer
	tail [16]byte
	n    int
}

func (t *tailBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		t.idle.touch()
		t.push(p[:n])
	}
	return n, err
}

func (t *tailBody) push(b []byte) {
	if len(b) >= len(t.tail) {
		t.n = copy(t.tail[:], b[len(b)-len(t.tail):])
		return
	}
	keep := min(t.n, len(t.tail)-len(b))
	copy(t.tail[:keep], t.tail[t.n-keep:t.n])
	t.n = keep + copy(t.tail[keep:], b)
}

var doneMarker = []byte("[DONE]")

func (t *tailBody) sawDone() bool {
	return bytes.HasSuffix(bytes.TrimRight(t.tail[:t.n], " \t\r\n"), doneMarker)
}

func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

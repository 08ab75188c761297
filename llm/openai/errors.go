package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/armadra/ama-rpc/internal/utf8cut"
	"github.com/armadra/ama-rpc/llm"
)

// classify turns an error of go-openai or of the transport into an
// *llm.Error. started says whether a chunk was received (a transport
// failure after that is a disconnect, before it a network error).
func (p *Provider) classify(ctx context.Context, err error, d *doer, started bool) *llm.Error {
	if errors.Is(ctx.Err(), context.Canceled) || errors.Is(err, context.Canceled) {
		return llm.Aborted()
	}
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	// RequestError first: it may wrap an empty APIError (go-openai does
	// that for bodies like {"error":"text"}).
	case errors.As(err, &reqErr):
		msg, typ, code := bodyDetail(reqErr.Body)
		if msg == "" {
			msg = http.StatusText(reqErr.HTTPStatusCode)
		}
		return p.httpError(reqErr.HTTPStatusCode, code, typ, msg, d.header)
	case errors.As(err, &apiErr):
		status, code := statusFromCode(apiErr.HTTPStatusCode, codeString(apiErr.Code))
		h := d.header
		if apiErr.HTTPStatusCode == 0 {
			h = nil // an error event of a 200 stream: its headers say nothing
		}
		return p.httpError(status, code, apiErr.Type, apiErr.Message, h)
	case errors.Is(err, goopenai.ErrChatCompletionInvalidModel),
		errors.Is(err, goopenai.ErrContentFieldsMisused),
		errors.Is(err, goopenai.ErrReasoningEffortUnsupported),
		errors.Is(err, goopenai.ErrReasoningToolsRequireResponses),
		errors.Is(err, goopenai.ErrReasoningSamplingUnsupported),
		errors.Is(err, goopenai.ErrReasoningModelMaxTokensDeprecated),
		errors.Is(err, goopenai.ErrReasoningModelLimitationsLogprobs),
		errors.Is(err, goopenai.ErrReasoningModelLimitationsOther):
		return &llm.Error{Kind: llm.ErrInvalid, Message: p.redact(p.opts.ID + ": " + err.Error())}
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return &llm.Error{Kind: llm.ErrNetwork, Message: p.opts.ID + ": request timed out"}
	case errors.Is(err, goopenai.ErrTooManyEmptyStreamMessages):
		return &llm.Error{Kind: llm.ErrDisconnect, Status: d.status,
			Message: p.opts.ID + ": the stream sent too many lines without data"}
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		// Only the request encoding can fail this way (a tool schema that
		// is not JSON, for instance).
		return &llm.Error{Kind: llm.ErrInvalid, Message: p.redact(p.opts.ID + ": cannot encode the request: " + err.Error())}
	}
	if started {
		return &llm.Error{Kind: llm.ErrDisconnect, Status: d.status,
			Message: p.redact("stream ended before the reply was complete: " + err.Error())}
	}
	return &llm.Error{Kind: llm.ErrNetwork, Message: p.redact(p.opts.ID + ": network error: " + err.Error())}
}

// classifyChunkError classifies a failure to apply one chunk.
func (p *Provider) classifyChunkError(err error, d *doer) *llm.Error {
	var se *streamError
	if errors.As(err, &se) {
		status, code := statusFromCode(0, codeString(se.e.Code))
		return p.httpError(status, code, se.e.Type, se.e.Message, nil)
	}
	return &llm.Error{Kind: llm.ErrServer, Status: d.status,
		Message: p.redact(p.opts.ID + ": malformed stream event: " + err.Error())}
}

// statusFromCode uses a numeric error code (OpenRouter puts the upstream
// HTTP status there) as the status of an error event that has none.
func statusFromCode(status int, code string) (int, string) {
	if status == 0 {
		if n, err := strconv.Atoi(code); err == nil && n >= 400 && n < 600 {
			return n, ""
		}
	}
	return status, code
}

// isTransport reports whether a read error is the connection's (not an
// error event of the API, not a cancellation).
func isTransport(err error) bool {
	var apiErr *goopenai.APIError
	return !errors.As(err, &apiErr) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// httpError builds the error for an HTTP status (0 for an error event in a
// stream that started with 200) and the error's code, type and message.
func (p *Provider) httpError(status int, code, typ, msg string, h http.Header) *llm.Error {
	kind := kindFor(status, code, typ, msg)
	label := typ
	if label == "" {
		label = code
	}
	msg = truncate(strings.TrimSpace(msg), 600)
	var text string
	switch {
	case kind == llm.ErrAuth:
		text = fmt.Sprintf("%s: authentication failed (%s) using %s", p.opts.ID, statusText(status, label), p.keySourceText())
		if msg != "" {
			text += ": " + msg
		}
	case status > 0 && label != "":
		text = fmt.Sprintf("%d %s: %s", status, label, msg)
	case status > 0:
		text = fmt.Sprintf("%d %s", status, msg)
	case label != "":
		text = fmt.Sprintf("%s: %s: %s", p.opts.ID, label, msg)
	default:
		text = p.opts.ID + ": " + msg
	}
	e := &llm.Error{Kind: kind, Status: status, Message: p.redact(text)}
	if h != nil && (kind == llm.ErrRateLimit || kind == llm.ErrOverloaded || kind == llm.ErrServer) {
		e.RetryAfter = retryAfter(h, time.Now())
	}
	return e
}

func statusText(status int, label string) string {
	switch {
	case status > 0 && label != "":
		return strconv.Itoa(status) + " " + label
	case status > 0:
		return strconv.Itoa(status)
	case label != "":
		return label
	}
	return "error event"
}

// kindFor classifies an API error.
func kindFor(status int, code, typ, msg string) llm.ErrorKind {
	words := strings.ToLower(code + " " + typ + " " + msg)
	switch {
	case status == http.StatusTooManyRequests:
		if strings.Contains(words, "insufficient_quota") {
			return llm.ErrOther // billing, not a rate: retrying cannot help
		}
		return llm.ErrRateLimit
	case status == 529 || status == http.StatusServiceUnavailable:
		return llm.ErrOverloaded
	case status >= 500:
		return llm.ErrServer
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return llm.ErrAuth
	case status == http.StatusRequestTimeout:
		return llm.ErrServer
	case status >= 400:
		if isOverflow(words) {
			return llm.ErrOverflow
		}
		return llm.ErrInvalid
	}
	// An error event inside a 200 stream: only words to go by.
	switch {
	case isOverflow(words):
		return llm.ErrOverflow
	case strings.Contains(words, "rate_limit") || strings.Contains(words, "rate limit"):
		return llm.ErrRateLimit
	case strings.Contains(words, "overload"):
		return llm.ErrOverloaded
	case strings.Contains(words, "invalid_api_key") || strings.Contains(words, "authentication"):
		return llm.ErrAuth
	}
	return llm.ErrServer
}

// overflowWords are the context-overflow texts of OpenAI, DeepSeek, vLLM,
// OpenRouter, llama.cpp and LM Studio.
var overflowWords = []string{
	"context_length_exceeded",
	"maximum context length",
	"context length",
	"context window",
	"prompt is too long",
	"too many tokens",
	"input is too long",
	"reduce the length of the messages",
	"exceeds the available context size",
}

func isOverflow(lower string) bool {
	for _, w := range overflowWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// retryAfter reads retry-after-ms (milliseconds) or Retry-After (seconds
// or an HTTP date).
func retryAfter(h http.Header, t time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f <= 0 {
			return 0
		}
		return time.Duration(f * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil && at.After(t) {
		return at.Sub(t)
	}
	return 0
}

// bodyDetail extracts message, type and code from an error body that
// go-openai could not read as {"error":{...}}: {"error":"text"} (Ollama),
// {"message":..,"type":..,"code":..} (vLLM), {"detail":"text"}, or plain text.
func bodyDetail(body []byte) (msg, typ, code string) {
	var v struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
		Detail  any    `json:"detail"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return truncate(strings.TrimSpace(string(body)), 600), "", ""
	}
	typ, code = v.Type, codeString(v.Code)
	switch e := v.Error.(type) {
	case string:
		msg = e
	case map[string]any:
		if m, ok := e["message"].(string); ok {
			msg = m
		}
		if t, ok := e["type"].(string); ok && typ == "" {
			typ = t
		}
		if code == "" {
			code = codeString(e["code"])
		}
	}
	if msg == "" {
		msg = v.Message
	}
	if msg == "" {
		if s, ok := v.Detail.(string); ok {
			msg = s
		}
	}
	if msg == "" {
		msg = truncate(strings.TrimSpace(string(body)), 600)
	}
	return msg, typ, code
}

func codeString(c any) string {
	switch v := c.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case int:
		return strconv.Itoa(v)
	}
	return fmt.Sprint(c)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return utf8cut.Head(s, n) + "…"
}

// tokenPattern matches bearer tokens and the usual API key shapes, so a
// server that echoes a (possibly different) key does not put it in an
// error message.
var tokenPattern = regexp.MustCompile(`(?i)\bbearer\s+[^\s"']+|\b(?:sk|gsk|xai|pk)[-_][A-Za-z0-9_\-*]{8,}`)

// urlSecretPattern matches the user info and the query of URLs in a text
// (a base URL such as https://user:key@host/v1 or https://host/v1?key=…
// carries its secret there; Go's transport errors quote the request URL).
var urlSecretPattern = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)([^/\s"'@?#]*@)?([^\s"'?#]*)([?#][^\s"']*)?`)

func redactTokens(s string) string {
	if strings.Contains(s, "://") {
		s = urlSecretPattern.ReplaceAllStringFunc(s, redactURL)
	}
	if !strings.ContainsAny(s, "-_") && !strings.Contains(strings.ToLower(s), "bearer") {
		return s
	}
	return tokenPattern.ReplaceAllString(s, "[redacted]")
}

// redactURL replaces the user info and the query of one URL.
func redactURL(u string) string {
	m := urlSecretPattern.FindStringSubmatch(u)
	if m == nil || (m[2] == "" && m[4] == "") {
		return u
	}
	out := m[1]
	if m[2] != "" {
		out += "[redacted]@"
	}
	out += m[3]
	if m[4] != "" {
		out += m[4][:1] + "[redacted]"
	}
	return out
}

package fake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// ProviderID is the id of the fake provider.
const ProviderID = "fake"

// Models returns the fake catalogue: fake/echo and fake/reasoning.
func Models() []*llm.Model {
	mk := func(id, name string, reasoning bool) *llm.Model {
		return &llm.Model{
			Provider: ProviderID, ID: id, Name: name, API: "fake", Reasoning: reasoning,
			Input: []string{"text", "image"}, ContextWindow: 200000, MaxTokens: 8192,
			Prices: llm.Prices{Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25},
		}
	}
	return []*llm.Model{mk("echo", "Fake Echo", false), mk("reasoning", "Fake Reasoning", true)}
}

// Options configure a Provider.
type Options struct {
	// ScriptPath is read lazily at the first call (AMA_FAKE_SCRIPT).
	ScriptPath string
	// Script is used when ScriptPath is empty.
	Script *Script
	// RecordPath receives one JSON line per request (AMA_FAKE_RECORD).
	RecordPath string
	// Sleep waits d or until ctx ends; tests may replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Provider replies from a script. Calls are numbered across all models and
// sessions of the process; call n uses response n (the first response not
// used yet, passing by those kept for another prompt: ForPrompt).
type Provider struct {
	opts Options

	mu      sync.Mutex
	loaded  bool
	script  *Script
	loadErr error
	calls   int
	last    *Response
	used    []bool // by response index
	first   int    // responses before it are all used
}

// New returns a fake provider.
func New(opts Options) *Provider {
	if opts.Sleep == nil {
		opts.Sleep = llm.Sleep
	}
	return &Provider{opts: opts}
}

// Entry returns the registry entry of the fake provider.
func (p *Provider) Entry() *llm.ProviderEntry {
	return &llm.ProviderEntry{ID: ProviderID, Name: "Fake (scripted)", Provider: p, Models: Models(), KeySource: "none", HasKey: true, BaseURL: "fake://local"}
}

// Calls returns the number of requests served so far.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// next picks the response for the next call.
func (p *Provider) next(req *llm.Request) (index int, r *Response, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.loaded {
		p.loaded = true
		switch {
		case p.opts.ScriptPath != "":
			p.script, p.loadErr = LoadScript(p.opts.ScriptPath)
		case p.opts.Script != nil:
			p.script = p.opts.Script
		default:
			p.script = &Script{}
		}
	}
	if p.loadErr != nil {
		return 0, nil, p.loadErr
	}
	index = p.calls
	p.calls++
	if p.used == nil {
		p.used = make([]bool, len(p.script.Responses))
	}
	for p.first < len(p.used) && p.used[p.first] {
		p.first++
	}
	prompt := ""
	for i := p.first; i < len(p.used); i++ {
		r = &p.script.Responses[i]
		if p.used[i] {
			continue
		}
		if r.ForPrompt != "" {
			if prompt == "" {
				prompt = lastUserText(req.Messages)
			}
			if !strings.Contains(prompt, r.ForPrompt) {
				continue
			}
		}
		p.used[i] = true
		p.last = r
		return index, r, nil
	}
	r = nil
	switch p.script.WhenExhausted {
	case "repeat-last":
		if p.last != nil {
			return index, p.last, nil
		}
	case "error":
		return index, nil, &llm.Error{Kind: llm.ErrOther, Status: 400, Message: fmt.Sprintf("fake script exhausted at call %d", index)}
	}
	text := lastUserText(req.Messages)
	return index, &Response{Text: &text}, nil
}

func lastUserText(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if u, ok := msgs[i].(*llm.UserMessage); ok {
			if t := u.Content.PlainText(); t != "" {
				return t
			}
			return "(no input)"
		}
	}
	return "(no input)"
}

// Stream plays the next scripted response.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, emit func(llm.StreamEvent, *llm.AssistantMessage)) (*llm.AssistantMessage, error) {
	b := llm.NewBuilder(req, "fake", emit)
	index, r, err := p.next(req)
	p.record(index, req)
	if err != nil {
		return b.Fail(err)
	}
	if err := p.opts.Sleep(ctx, time.Duration(r.DelayMs)*time.Millisecond); err != nil {
		return b.Fail(llm.Aborted())
	}
	if r.Error != nil && r.Error.Kind != "disconnect" {
		var u llm.Usage
		u.Finalize(llm.Prices{})
		b.SetUsage(u)
		return b.Fail(scriptError(r.Error))
	}
	b.Start()
	produced := 0
	steps := r.Steps
	if r.Text != nil {
		steps = append(append([]Step(nil), steps...), Step{Text: r.Text})
	}
	for _, st := range steps {
		if err := ctx.Err(); err != nil {
			return p.abort(b)
		}
		switch {
		case st.WaitFile != "":
			if err := p.waitFile(ctx, st.WaitFile); err != nil {
				return p.abort(b)
			}
		case st.DelayMs > 0:
			if err := p.opts.Sleep(ctx, time.Duration(st.DelayMs)*time.Millisecond); err != nil {
				return p.abort(b)
			}
		case st.Text != nil:
			idx := b.TextStart()
			if err := chunks(ctx, *st.Text, st.ChunkSize, func(s string) { b.Delta(idx, s) }); err != nil {
				return p.abort(b)
			}
			produced += len(*st.Text)
			b.End(idx)
		case st.Thinking != nil:
			idx := b.ThinkingStart()
			if err := chunks(ctx, *st.Thinking, st.ChunkSize, func(s string) { b.Delta(idx, s) }); err != nil {
				return p.abort(b)
			}
			sig := "fake-signature"
			if st.Signature != nil {
				sig = *st.Signature
			}
			b.SetSignature(idx, sig)
			produced += len(*st.Thinking)
			b.End(idx)
		case st.ToolCall != nil:
			id := st.ToolCall.ID
			if id == "" {
				id = "fake_call_" + strconv.Itoa(len(b.Message().Content))
			}
			args := compactArgs(st.ToolCall.Arguments)
			idx := b.ToolCallStart(id, st.ToolCall.Name)
			if err := chunks(ctx, args, st.ChunkSize, func(s string) { b.Delta(idx, s) }); err != nil {
				return p.abort(b)
			}
			produced += len(args)
			b.End(idx)
		}
	}
	u := usageFor(r, req, produced)
	u.Finalize(req.Model.Prices)
	b.SetUsage(u)
	if r.Error != nil { // disconnect: after the content
		return b.Fail(scriptError(r.Error))
	}
	return b.Finish(r.StopReason), nil
}

// waitFile polls for the gate file next to the script until it exists or
// ctx ends.
func (p *Provider) waitFile(ctx context.Context, name string) error {
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(p.opts.ScriptPath), name)
	}
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if err := p.opts.Sleep(ctx, 2*time.Millisecond); err != nil {
			return err
		}
	}
}

func (p *Provider) abort(b *llm.Builder) (*llm.AssistantMessage, error) {
	u := b.Message().Usage
	u.Finalize(llm.Prices{})
	b.SetUsage(u)
	return b.Fail(llm.Aborted())
}

// chunks calls fn with pieces of s of size runes (all of s when size is 0),
// checking ctx between pieces so an abort lands mid-block.
func chunks(ctx context.Context, s string, size int, fn func(string)) error {
	if s == "" {
		return nil
	}
	if size <= 0 {
		fn(s)
		return nil
	}
	start, n := 0, 0
	for i := range s {
		if n == size {
			if err := ctx.Err(); err != nil {
				return err
			}
			fn(s[start:i])
			start, n = i, 0
		}
		n++
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fn(s[start:])
	return nil
}

func compactArgs(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "{}"
	}
	return buf.String()
}

// usageFor returns the scripted usage, estimating absent counts like ama:
// input from the serialised context (4 characters a token), output from
// the produced characters.
func usageFor(r *Response, req *llm.Request, produced int) llm.Usage {
	var u llm.Usage
	spec := r.Usage
	if spec == nil {
		spec = &UsageSpec{}
	}
	if spec.Input != nil {
		u.Input = *spec.Input
	} else {
		n := 0
		for _, m := range req.Messages {
			n += llm.EncodedLen(m)
		}
		u.Input = ceilDiv(n, 4)
	}
	if spec.Output != nil {
		u.Output = *spec.Output
	} else {
		u.Output = ceilDiv(produced, 4)
	}
	if spec.CacheRead != nil {
		u.CacheRead = *spec.CacheRead
	}
	if spec.CacheWrite != nil {
		u.CacheWrite = *spec.CacheWrite
	}
	return u
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// scriptError builds the provider-like failure of an error spec.
func scriptError(e *ErrorSpec) *llm.Error {
	var out llm.Error
	switch e.Kind {
	case "rate_limit":
		out = llm.Error{Kind: llm.ErrRateLimit, Status: 429, Message: "429 rate_limit_error: Rate limit exceeded"}
	case "overloaded":
		out = llm.Error{Kind: llm.ErrOverloaded, Status: 529, Message: "529 overloaded_error: Overloaded"}
	case "server":
		out = llm.Error{Kind: llm.ErrServer, Status: 500, Message: "500 api_error: Internal server error"}
	case "auth":
		out = llm.Error{Kind: llm.ErrAuth, Status: 401, Message: "401 authentication_error: invalid x-api-key"}
	case "overflow":
		out = llm.Error{Kind: llm.ErrOverflow, Status: 400, Message: "400 invalid_request_error: prompt is too long: 250000 tokens > 200000 maximum"}
	case "network":
		out = llm.Error{Kind: llm.ErrNetwork, Status: 0, Message: "fetch failed: ECONNRESET socket hang up"}
	case "disconnect":
		out = llm.Error{Kind: llm.ErrDisconnect, Status: 200, Message: "Stream ended before completion"}
	default:
		status := 400
		if e.Status != nil {
			status = *e.Status
		}
		msg := "fake error"
		if e.Message != "" {
			msg = e.Message
		}
		out = llm.Error{Kind: llm.ErrOther, Status: status, Message: fmt.Sprintf("%d %s", status, msg)}
	}
	if e.Message != "" && e.Kind != "custom" {
		out.Message = fmt.Sprintf("%d %s", out.Status, e.Message)
	}
	if e.RetryAfterMs > 0 {
		out.RetryAfter = time.Duration(e.RetryAfterMs) * time.Millisecond
	}
	return &out
}

// record appends the request summary to the record file.
func (p *Provider) record(index int, req *llm.Request) {
	if p.opts.RecordPath == "" {
		return
	}
	names := make([]string, 0, len(req.Tools))
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	line, _ := json.Marshal(struct {
		Index         int           `json:"index"`
		Purpose       string        `json:"purpose"`
		Model         string        `json:"model"`
		System        string        `json:"system"`
		Tools         []string      `json:"tools"`
		MessagesCount int           `json:"messagesCount"`
		Messages      []llm.Message `json:"messages"`
	}{index, req.Purpose, req.Model.Ref(), req.System, names, len(req.Messages), req.Messages})
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.OpenFile(p.opts.RecordPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
}

package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/armadra/ama-rpc/llm"
)

// chunk is one "chat.completion.chunk" event. It is decoded here rather than
// by go-openai's Recv because the stream type of go-openai has no field for
// the "reasoning" delta of OpenRouter (and of recent vLLM / Ollama), nor for
// the "error" object OpenRouter puts into a chunk mid-stream, nor for
// DeepSeek's prompt_cache_hit_tokens. RecvRaw gives us the event's JSON.
type chunk struct {
	ID      string        `json:"id"`
	Choices []chunkChoice `json:"choices"`
	Usage   *chunkUsage   `json:"usage"`
	Error   *chunkError   `json:"error"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason string     `json:"finish_reason"`
}

type chunkDelta struct {
	Content          string          `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	Refusal          string          `json:"refusal"`
	ToolCalls        []chunkToolCall `json:"tool_calls"`
}

type chunkToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chunkUsage is the usage object. go-openai's Usage (v1.43) has only
// prompt_tokens_details.cached_tokens; the variants below are decoded here
// (pointers: absent differs from 0, which tells whether the endpoint
// reports caching at all).
type chunkUsage struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	PromptTokensDetails *promptTokensDetails `json:"prompt_tokens_details"`
	// DeepSeek reports cache hits here.
	PromptCacheHitTokens *int `json:"prompt_cache_hit_tokens"`
	// Moonshot (Kimi) reports them at the top level.
	CachedTokens *int `json:"cached_tokens"`
}

type promptTokensDetails struct {
	// OpenAI, vLLM (--enable-prompt-tokens-details), OpenRouter.
	CachedTokens *int `json:"cached_tokens"`
	// OpenRouter: tokens written to the cache (Anthropic, Gemini).
	CacheWriteTokens *int `json:"cache_write_tokens"`
}

type chunkError struct {
	Code    any    `json:"code"`
	Message string `json:"message"`
	Type    string `json:"type"`
}

// streamError is an error object found inside a chunk.
type streamError struct{ e *chunkError }

func (s *streamError) Error() string { return s.e.Message }

// toolSlot is one tool call of the reply, keyed by the stream's index.
type toolSlot struct {
	key   int
	block int
	id    string
}

// streamState turns chunks into Builder steps. It belongs to one Stream call.
type streamState struct {
	b        *llm.Builder
	text     int // open text block, -1 when none
	thinking int // open thinking block, -1 when none
	tools    []toolSlot
	finish   string
	refusal  bool
	sawChunk bool
	usage    llm.Usage
	c        chunk // reused between chunks
	// fast tries parseFast on every chunk before the decoder (false: the
	// reference path of the differential tests, decoder only).
	fast    bool
	scratch []byte // parseFast's unquoting buffer
	// One decoder over a reset reader decodes every chunk the fast path
	// refuses: unlike json.Unmarshal it keeps its scanner and decode
	// state, which saves three allocations per chunk.
	rd  bytes.Reader
	dec *json.Decoder
	// replyBytes counts the reply's content (text, thinking, refusal,
	// tool names and arguments); more than maxReply (0: no bound) fails
	// the reply with errReplyTooLarge.
	replyBytes int
	maxReply   int
}

// errReplyTooLarge is the error of a reply longer than maxReply.
var errReplyTooLarge = errors.New("the reply is too long")

func newStreamState(b *llm.Builder, fast bool) *streamState {
	s := &streamState{b: b, text: -1, thinking: -1, fast: fast}
	s.dec = json.NewDecoder(&s.rd)
	return s
}

// resetChunk clears s.c for the next chunk, keeping the choices array:
// fields absent from the next chunk must not keep this chunk's values.
func (s *streamState) resetChunk() {
	choices := s.c.Choices[:cap(s.c.Choices)]
	clear(choices)
	s.c = chunk{Choices: choices[:0]}
}

// decode fills s.c from one event's JSON: parseFast for the common shape,
// else (or when it refuses) encoding/json, exactly as before the fast path
// existed.
func (s *streamState) decode(raw []byte) error {
	s.resetChunk()
	if s.fast {
		if parseFast(raw, &s.c, &s.scratch) {
			return nil
		}
		s.resetChunk()
	}
	s.rd.Reset(raw)
	if err := s.dec.Decode(&s.c); err != nil {
		return err
	}
	if s.dec.More() {
		return errors.New("trailing data after the event's JSON")
	}
	if s.fast && leftover(s.dec) {
		// More is false before a stray "}" or "]": the decoder keeps it
		// and fails on the next chunk. Only the decoder can reproduce
		// that, so it decodes the rest of this stream.
		s.fast = false
	}
	return nil
}

// leftover reports whether dec holds bytes other than white space after
// the value it decoded.
func leftover(dec *json.Decoder) bool {
	rest, _ := io.ReadAll(dec.Buffered())
	return len(bytes.Trim(rest, " \t\r\n")) > 0
}

// handle applies one chunk.
func (s *streamState) handle(raw []byte) error {
	if err := s.decode(raw); err != nil {
		return err
	}
	if s.c.Error != nil {
		return &streamError{s.c.Error}
	}
	s.sawChunk = true
	s.b.Start()
	if m := s.b.Message(); m.ResponseID == "" && s.c.ID != "" {
		m.ResponseID = s.c.ID
	}
	if u := s.c.Usage; u != nil {
		s.setUsage(u)
	}
	for i := range s.c.Choices {
		ch := &s.c.Choices[i]
		if ch.Index != 0 {
			continue // n > 1 is never requested
		}
		s.delta(&ch.Delta)
		if ch.FinishReason == "error" {
			// OpenRouter ends a failed generation this way; the error
			// object, when there is one, was handled above.
			return &streamError{&chunkError{Message: "the provider ended the reply with finish_reason \"error\""}}
		}
		if ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
	}
	if s.maxReply > 0 && s.replyBytes > s.maxReply {
		return errReplyTooLarge
	}
	return nil
}

func (s *streamState) delta(d *chunkDelta) {
	// Servers that send both fields send the same text twice.
	reasoning := d.ReasoningContent
	if reasoning == "" {
		reasoning = d.Reasoning
	}
	s.replyBytes += len(reasoning) + len(d.Content) + len(d.Refusal)
	for i := range d.ToolCalls {
		s.replyBytes += len(d.ToolCalls[i].Function.Name) + len(d.ToolCalls[i].Function.Arguments)
	}
	if reasoning != "" {
		s.closeText()
		if s.thinking < 0 {
			s.thinking = s.b.ThinkingStart()
		}
		s.b.Delta(s.thinking, reasoning)
	}
	if d.Content != "" {
		s.appendText(d.Content)
	}
	if d.Refusal != "" {
		s.refusal = true
		s.appendText(d.Refusal)
	}
	for i := range d.ToolCalls {
		tc := &d.ToolCalls[i]
		s.closeText()
		s.closeThinking()
		slot := s.slot(tc)
		if tc.Function.Name != "" {
			if call, ok := s.b.Message().Content[slot.block].(*llm.ToolCall); ok && call.Name == "" {
				call.Name = tc.Function.Name
			}
		}
		s.b.Delta(slot.block, tc.Function.Arguments)
	}
}

func (s *streamState) appendText(t string) {
	s.closeThinking()
	if s.text < 0 {
		s.text = s.b.TextStart()
	}
	s.b.Delta(s.text, t)
}

// slot returns the tool call tc continues, opening a new one on first sight
// of its index. A fragment without an index (some servers send whole calls)
// opens a new call when it brings an id not seen yet, else continues the
// last call.
func (s *streamState) slot(tc *chunkToolCall) *toolSlot {
	key := -1
	if tc.Index != nil {
		key = *tc.Index
		for i := range s.tools {
			if s.tools[i].key == key {
				return &s.tools[i]
			}
		}
	} else if n := len(s.tools); n > 0 && (tc.ID == "" || tc.ID == s.tools[n-1].id) {
		return &s.tools[n-1]
	} else {
		key = -1 - len(s.tools)
	}
	id := tc.ID
	if id == "" {
		id = "call_" + strconv.Itoa(len(s.b.Message().Content))
	}
	block := s.b.ToolCallStart(id, tc.Function.Name)
	s.tools = append(s.tools, toolSlot{key: key, block: block, id: id})
	return &s.tools[len(s.tools)-1]
}

func (s *streamState) closeText() {
	if s.text >= 0 {
		s.b.End(s.text)
		s.text = -1
	}
}

func (s *streamState) closeThinking() {
	if s.thinking >= 0 {
		s.b.End(s.thinking)
		s.thinking = -1
	}
}

func (s *streamState) setUsage(u *chunkUsage) {
	cached, written, reported := 0, 0, false
	take := func(p *int, dst *int) {
		if p != nil {
			reported = true
			if *p > *dst {
				*dst = *p
			}
		}
	}
	take(u.PromptCacheHitTokens, &cached)
	take(u.CachedTokens, &cached)
	if d := u.PromptTokensDetails; d != nil {
		take(d.CachedTokens, &cached)
		take(d.CacheWriteTokens, &written)
	}
	cached = min(max(cached, 0), u.PromptTokens)
	written = min(max(written, 0), u.PromptTokens-cached)
	s.usage = llm.Usage{Input: u.PromptTokens - cached - written, Output: u.CompletionTokens, CacheRead: cached,
		CacheWrite: written, NoCacheField: !reported}
	s.b.SetUsage(s.usage)
}

func (s *streamState) finalizeUsage(p llm.Prices) {
	u := s.b.Message().Usage
	u.Finalize(p)
	s.b.SetUsage(u)
}

// stopReason maps finish_reason to the message's stop reason and the raw
// reason kept when the mapping is not one to one. "" lets Builder.Finish
// decide (toolUse when there are tool calls, else stop).
func (s *streamState) stopReason() (reason, raw string) {
	hasTools := len(s.tools) > 0
	switch s.finish {
	case "stop":
		if hasTools {
			return llm.StopToolUse, s.finish // Ollama and others report tool calls as "stop"
		}
		if s.refusal {
			return llm.StopRefusal, s.finish
		}
		return llm.StopStop, ""
	case "length":
		return llm.StopLength, ""
	case "tool_calls", "function_call":
		return llm.StopToolUse, ""
	case "content_filter":
		return llm.StopRefusal, s.finish
	case "":
		if s.refusal && !hasTools {
			return llm.StopRefusal, ""
		}
		return "", ""
	}
	return "", s.finish
}

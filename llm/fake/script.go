package fake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/armadra/ama-rpc/llm"
)

// ErrInvalidScript is wrapped by every script validation error. It wraps
// llm.ErrInvalidConfig, which is what the wire layers map (they do not
// import this package).
var ErrInvalidScript error = &invalidScript{"invalid fake script"}

// invalidScript is ErrInvalidScript: its own text, llm's kind.
type invalidScript struct{ msg string }

func (e *invalidScript) Error() string { return e.msg }
func (*invalidScript) Unwrap() error   { return llm.ErrInvalidConfig }

// Script is a scripted sequence of replies.
type Script struct {
	Responses     []Response `json:"responses"`
	WhenExhausted string     `json:"whenExhausted,omitempty"` // echo (default), repeat-last, error
}

// Response is one scripted reply.
type Response struct {
	Steps      []Step     `json:"steps,omitempty"`
	Text       *string    `json:"text,omitempty"`
	StopReason string     `json:"stopReason,omitempty"`
	Usage      *UsageSpec `json:"usage,omitempty"`
	Error      *ErrorSpec `json:"error,omitempty"`
	DelayMs    int64      `json:"delayMs,omitempty"`
	// ForPrompt keeps the response for the first call whose last user
	// message contains this text; calls before it that do not match pass
	// it by (a sub-agent's reply, whose request races the parent's next
	// one). Empty: the next call takes it.
	ForPrompt string `json:"forPrompt,omitempty"`
}

// UsageSpec overrides token counts; absent fields are estimated.
type UsageSpec struct {
	Input      *int `json:"input,omitempty"`
	Output     *int `json:"output,omitempty"`
	CacheRead  *int `json:"cacheRead,omitempty"`
	CacheWrite *int `json:"cacheWrite,omitempty"`
}

// ErrorSpec makes the reply fail.
type ErrorSpec struct {
	Kind         string `json:"kind"`
	Message      string `json:"message,omitempty"`
	Status       *int   `json:"status,omitempty"`
	RetryAfterMs int64  `json:"retryAfterMs,omitempty"`
}

// Step is one part of a reply: text, thinking, a tool call or a pause.
type Step struct {
	Text      *string       `json:"text,omitempty"`
	Thinking  *string       `json:"thinking,omitempty"`
	Signature *string       `json:"signature,omitempty"`
	ToolCall  *ToolCallSpec `json:"toolCall,omitempty"`
	ChunkSize int           `json:"chunkSize,omitempty"`
	DelayMs   int64         `json:"delayMs,omitempty"`
	// WaitFile pauses the reply until a file of this name exists next to
	// the script (a gate a test opens when it is ready).
	WaitFile string `json:"waitFile,omitempty"`
}

// ToolCallSpec is a scripted tool call.
type ToolCallSpec struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	ID        string          `json:"id,omitempty"`
}

var errorKinds = map[string]bool{
	"rate_limit": true, "overloaded": true, "server": true, "auth": true, "overflow": true,
	"network": true, "disconnect": true, "custom": true,
}

// LoadScript reads and validates a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: fake script %s: %v", ErrInvalidScript, path, err)
	}
	s, err := ParseScript(data)
	if err != nil {
		// Keep the parser's reason (position, what was expected); only the
		// repeated prefix goes.
		reason := strings.TrimPrefix(err.Error(), ErrInvalidScript.Error()+": ")
		return nil, fmt.Errorf("%w: fake script %s: %s", ErrInvalidScript, path, reason)
	}
	return s, nil
}

// ParseScript parses a script: {"version":1,"responses":[…]} or a bare array.
func ParseScript(data []byte) (*Script, error) {
	data = bytes.TrimSpace(data)
	var s Script
	if len(data) > 0 && data[0] == '[' {
		if err := strictDecode(data, &s.Responses); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrInvalidScript, describeJSONError(data, err))
		}
	} else {
		var aux struct {
			Version       *int       `json:"version"`
			Responses     []Response `json:"responses"`
			WhenExhausted string     `json:"whenExhausted"`
		}
		if err := strictDecode(data, &aux); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrInvalidScript, describeJSONError(data, err))
		}
		if aux.Version != nil && *aux.Version != 1 {
			return nil, fmt.Errorf("%w: unsupported version %d", ErrInvalidScript, *aux.Version)
		}
		if aux.Responses == nil {
			return nil, fmt.Errorf("%w: responses must be an array", ErrInvalidScript)
		}
		s.Responses, s.WhenExhausted = aux.Responses, aux.WhenExhausted
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidScript, err)
	}
	return &s, nil
}

// describeJSONError names where a decoding error happened (line and
// column) and what was wrong, so a script author can find the mistake.
func describeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var pos *positionedError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("%s: %v", position(data, syn.Offset), err)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "value"
		}
		return fmt.Sprintf("%s: %s must be %s, not JSON %s", position(data, typ.Offset), field, typ.Type, typ.Value)
	case errors.As(err, &pos):
		return fmt.Sprintf("%s: %s", position(data, pos.off), strings.TrimPrefix(pos.err.Error(), "json: "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("%s: unexpected end of the script", position(data, int64(len(data))))
	}
	return err.Error()
}

// position is "line L, column C" (1-based) of a byte offset.
func position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return fmt.Sprintf("line %d, column %d", line, col)
}

// strictDecode decodes data into v, refusing unknown keys. Errors that
// carry no position of their own (an unknown key) get the decoder's.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &syn) && !errors.As(err, &typ) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		off := dec.InputOffset()
		// encoding/json names an unknown key but not where it is: point at
		// its first use as a key.
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			if m := regexp.MustCompile(regexp.QuoteMeta(name) + `\s*:`).FindIndex(data); m != nil {
				off = int64(m[0])
			}
		}
		return &positionedError{off: off, err: err}
	}
	return err
}

// positionedError is a decoding error at a byte offset.
type positionedError struct {
	off int64
	err error
}

func (e *positionedError) Error() string { return e.err.Error() }
func (e *positionedError) Unwrap() error { return e.err }

func (s *Script) validate() error {
	switch s.WhenExhausted {
	case "", "echo", "repeat-last", "error":
	default:
		return fmt.Errorf("whenExhausted must be echo, repeat-last or error, not %q", s.WhenExhausted)
	}
	for i, r := range s.Responses {
		if r.DelayMs < 0 {
			return fmt.Errorf("responses[%d].delayMs must not be negative", i)
		}
		switch r.StopReason {
		case "", "stop", "length", "toolUse", "refusal":
		default:
			return fmt.Errorf("responses[%d].stopReason %q is not stop, length, toolUse or refusal", i, r.StopReason)
		}
		if r.Error != nil && !errorKinds[r.Error.Kind] {
			return fmt.Errorf("responses[%d].error.kind %q is unknown", i, r.Error.Kind)
		}
		for j, st := range r.Steps {
			n := 0
			for _, set := range []bool{st.Text != nil, st.Thinking != nil, st.ToolCall != nil, st.DelayMs != 0, st.WaitFile != ""} {
				if set {
					n++
				}
			}
			if n != 1 {
				return fmt.Errorf("responses[%d].steps[%d] must have exactly one of text, thinking, toolCall, delayMs, waitFile", i, j)
			}
			if st.ChunkSize < 0 || st.DelayMs < 0 {
				return fmt.Errorf("responses[%d].steps[%d]: chunkSize and delayMs must not be negative", i, j)
			}
			if st.ToolCall != nil {
				if st.ToolCall.Name == "" {
					return fmt.Errorf("responses[%d].steps[%d].toolCall.name is required", i, j)
				}
				if a := bytes.TrimSpace(st.ToolCall.Arguments); len(a) > 0 && a[0] != '{' && string(a) != "null" {
					return fmt.Errorf("responses[%d].steps[%d].toolCall.arguments must be an object", i, j)
				}
			}
		}
	}
	return nil
}

package codemode

import "encoding/json"

// The line protocol between the tool (parent) and the script process
// (child): one JSON object per line on the child's stdin and stdout.
// Go's encoder escapes U+2028/U+2029, so a line never splits.

// Parent → child.
type (
	// runMsg starts the script (sent once, first).
	runMsg struct {
		Type      string                     `json:"type"` // "run"
		Script    string                     `json:"script"`
		Tools     []toolInfo                 `json:"tools"`
		Store     map[string]json.RawMessage `json:"store"`
		MaxHeapMB int                        `json:"maxHeapMb"`
		MaxCalls  int                        `json:"maxCalls"`
	}
	toolInfo struct {
		Name        string `json:"name"`
		Declaration string `json:"declaration"`
	}
	// resultMsg settles one tools.<name>() promise.
	resultMsg struct {
		Type  string          `json:"type"` // "tool_result"
		ID    int             `json:"id"`
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value,omitempty"`
		Error string          `json:"error,omitempty"`
	}
)

// Child → parent.
type childMsg struct {
	Type string `json:"type"` // ready, tool_call, output, store, done
	// tool_call
	ID    int             `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// output
	Text string `json:"text,omitempty"`
	// store
	Entries map[string]json.RawMessage `json:"entries,omitempty"`
	// done
	OK        bool   `json:"ok,omitempty"`
	Error     string `json:"error,omitempty"`
	ElapsedMs int64  `json:"elapsedMs,omitempty"`
}

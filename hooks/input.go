package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Model is the {provider, id} of the current model.
type Model struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
}

// Common are the fields every hook input starts with (spec §3.1, key
// order as serialised).
type Common struct {
	SessionID      string `json:"sessionId"`
	SessionFile    string `json:"sessionFile,omitempty"`
	Cwd            string `json:"cwd"`
	Model          Model  `json:"model"`
	PermissionMode string `json:"permissionMode"`
	Depth          int    `json:"depth"`
	Host           string `json:"host,omitempty"`
}

// Event payloads (spec §3.2), fields in serialisation order.
type (
	SessionStartInput struct {
		Source string `json:"source"`
	}
	SessionEndInput struct {
		Reason string `json:"reason"`
	}
	PromptInput struct {
		Prompt string `json:"prompt"`
	}
	ToolInput struct {
		ToolCallID       string          `json:"toolCallId"`
		ToolName         string          `json:"toolName"`
		ToolInput        json.RawMessage `json:"toolInput"`
		ViaCodemode      bool            `json:"viaCodemode,omitempty"`
		ParentToolCallID string          `json:"parentToolCallId,omitempty"`
	}
	PostToolInput struct {
		ToolCallID       string          `json:"toolCallId"`
		ToolName         string          `json:"toolName"`
		ToolInput        json.RawMessage `json:"toolInput"`
		ToolResult       ToolResult      `json:"toolResult"`
		ViaCodemode      bool            `json:"viaCodemode,omitempty"`
		ParentToolCallID string          `json:"parentToolCallId,omitempty"`
	}
	ToolResult struct {
		Content string `json:"content"`
		IsError bool   `json:"isError"`
	}
	StopInput struct {
		LastAssistantText *string `json:"lastAssistantText,omitempty"`
		StopHookActive    bool    `json:"stopHookActive"`
	}
	PreCompactInput struct {
		TokensBefore int    `json:"tokensBefore"`
		Trigger      string `json:"trigger"`
	}
	PostCompactInput struct {
		TokensBefore int    `json:"tokensBefore"`
		TokensAfter  int    `json:"tokensAfter"`
		Trigger      string `json:"trigger"`
	}
	NotificationInput struct {
		Notification NotificationBody `json:"notification"`
	}
	NotificationBody struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	PostRewindInput struct {
		EntryID string   `json:"entryId"`
		Mode    string   `json:"mode"`
		Files   []string `json:"files"`
	}
)

// BuildInput serialises {common..., payload..., hookEventName} as one
// line (with the trailing newline written to stdin).
func BuildInput(e Event, c Common, payload any) ([]byte, error) {
	var b bytes.Buffer
	head, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("hook input: %w", err)
	}
	b.Write(head[:len(head)-1])
	if payload != nil {
		p, err := json.Marshal(payload)
		if err != nil {
			return nil, fmt.Errorf("hook input: %w", err)
		}
		if len(p) > 2 && p[0] == '{' {
			b.WriteByte(',')
			b.Write(p[1 : len(p)-1])
		}
	}
	b.WriteString(`,"hookEventName":`)
	name, _ := json.Marshal(string(e))
	b.Write(name)
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// Env returns the hook variables of spec §3.3 appended to base.
func Env(base []string, e Event, c Common, tool string, input json.RawMessage) []string {
	env := append(base[:len(base):len(base)], "AMA_HOOK_EVENT="+string(e), "AMA_SESSION_ID="+c.SessionID, "AMA_CWD="+c.Cwd)
	if tool != "" {
		env = append(env, "AMA_TOOL_NAME="+tool)
		if tool == "read" || tool == "write" || tool == "edit" {
			var obj map[string]json.RawMessage
			if json.Unmarshal(input, &obj) == nil {
				for _, k := range []string{"path", "file_path"} {
					var s string
					if raw, ok := obj[k]; ok && json.Unmarshal(raw, &s) == nil {
						env = append(env, "AMA_FILE="+s)
						break
					}
				}
			}
		}
	}
	return env
}

package rpc

import (
	"encoding/json"
	"github.com/armadra/ama-rpc/permlog"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/sandbox"
	"github.com/armadra/ama-rpc/session"
	"github.com/armadra/ama-rpc/telemetry"
)

// ProtocolVersion is RPC_PROTOCOL_VERSION.
const ProtocolVersion = 1

// Hello is the first line the server writes.
type Hello struct {
	Type            string   `json:"type"`
	ProtocolVersion int      `json:"protocolVersion"`
	Agent           string   `json:"agent"`
	Version         string   `json:"version"`
	Capabilities    []string `json:"capabilities"`
}

// Response answers one command.
type Response struct {
	ID      *string `json:"id,omitempty"`
	Type    string  `json:"type"`
	Command string  `json:"command"`
	Success bool    `json:"success"`
	Data    any     `json:"data,omitempty"`
	Error   string  `json:"error,omitempty"`
	Code    string  `json:"code,omitempty"`
}

// null is data that must be written as JSON null (not omitted).
var null = json.RawMessage("null")

// empty is the data {} of commands without a result.
type empty struct{}

// wireState is get_state: the session's State (its JSON is the wire
// shape) and the sandbox report, which the server adds.
type wireState struct {
	session.State
	// Sandbox is present when bash sandboxing is configured.
	Sandbox *sandbox.Report `json:"sandbox,omitempty"`
}

type wireModel struct {
	Provider      string   `json:"provider"`
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	HasKey        bool     `json:"hasKey"`
	KeySource     string   `json:"keySource"`
	MaxTokens     int      `json:"maxTokens"`
	Reasoning     bool     `json:"reasoning"`
	Input         []string `json:"input"`
	ContextWindow int      `json:"contextWindow,omitempty"`
}

// wireModels lists the catalogue; key material never leaves the process,
// only whether a key exists and where it comes from.
func wireModels(r *llm.Registry) []wireModel {
	out := []wireModel{}
	for _, p := range r.Providers() {
		for _, m := range p.Models {
			input := m.Input
			if input == nil {
				input = []string{"text"}
			}
			out = append(out, wireModel{Provider: p.ID, ID: m.ID, Name: m.Name, HasKey: p.HasKey, KeySource: p.KeySource,
				MaxTokens: m.MaxTokens, Reasoning: m.Reasoning, Input: input, ContextWindow: m.ContextWindow})
		}
	}
	return out
}

// wireStats is get_session_stats. It is a mapping because the shape
// really differs from session.Stats: the context use is written twice
// (flat contextTokens/contextWindow/contextPercent, and the context
// object), as in the reference. Its parts (TokenTotals, ContextUse) carry
// their own tags.
type wireStats struct {
	SessionID         string                      `json:"sessionId"`
	SessionFile       string                      `json:"sessionFile,omitempty"`
	UserMessages      int                         `json:"userMessages"`
	AssistantMessages int                         `json:"assistantMessages"`
	ToolCalls         int                         `json:"toolCalls"`
	ToolResults       int                         `json:"toolResults"`
	Tokens            session.TokenTotals         `json:"tokens"`
	Cost              *float64                    `json:"cost,omitempty"`
	ContextTokens     *int                        `json:"contextTokens,omitempty"`
	ContextWindow     *int                        `json:"contextWindow,omitempty"`
	ContextPercent    *float64                    `json:"contextPercent,omitempty"`
	Context           *session.ContextUse         `json:"context,omitempty"`
	CacheHitRate      *float64                    `json:"cacheHitRate,omitempty"`
	Cache             *telemetry.CacheStats       `json:"cache,omitempty"`
	Telemetry         *telemetry.SessionTelemetry `json:"telemetry,omitempty"`
	Permissions       *permlog.Counts             `json:"permissions,omitempty"`
}

func toWireStats(s session.Stats) wireStats {
	w := wireStats{
		SessionID: s.SessionID, SessionFile: s.SessionFile, UserMessages: s.UserMessages,
		AssistantMessages: s.AssistantMessages, ToolCalls: s.ToolCalls, ToolResults: s.ToolResults,
		Tokens: s.Tokens, Cost: s.Cost, CacheHitRate: s.CacheHitRate, Cache: s.Cache, Telemetry: s.Telemetry,
		Permissions: s.Permissions,
	}
	if c := s.Context; c != nil {
		tokens, window, pct := c.Tokens, c.Window, c.Percent
		w.ContextTokens, w.ContextWindow, w.ContextPercent = &tokens, &window, &pct
		w.Context = c
	}
	return w
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Permission  string          `json:"permission"`
	Active      bool            `json:"active"`
	// MCPServer is the MCP server of an mcp__<server>__<tool> tool.
	MCPServer string `json:"mcpServer,omitempty"`
}

type wireCommand struct {
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Source       string `json:"source"`
	ArgumentHint string `json:"argumentHint,omitempty"`
}

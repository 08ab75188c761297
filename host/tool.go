package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/agents"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// Tool is a host-registered tool: a tools.Tool whose Execute is a call to
// the adapter. Validation, permission, approval and events are the
// session's, exactly as for built-in tools.
type Tool struct {
	h   *Host
	def ToolDef
}

var _ tools.Tool = (*Tool)(nil)

// Decl is the declaration sent to the model.
func (t *Tool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: t.def.Name, Description: t.def.Description, Parameters: t.def.Parameters}
}

// Permission is the class the adapter declared.
func (t *Tool) Permission() string { return t.def.Permission }

// ExecutionMode is the declared batching ("parallel", "sequential" or "":
// by permission class).
func (t *Tool) ExecutionMode() string { return t.def.ExecutionMode }

// PromptSnippet is the tool's line in the tools section ("": the first
// sentence of the description).
func (t *Tool) PromptSnippet() string { return t.def.PromptSnippet }

// PromptGuidelines are bullets for the rules section.
func (t *Tool) PromptGuidelines() []string { return t.def.PromptGuidelines }

// Def returns the registered definition.
func (t *Tool) Def() ToolDef { return t.def }

type toolContext struct {
	Cwd         string        `json:"cwd"`
	SessionID   string        `json:"sessionId"`
	SessionFile string        `json:"sessionFile,omitempty"`
	Depth       int           `json:"depth"`
	Model       *llm.ModelRef `json:"model,omitempty"`
	OutputDir   string        `json:"outputDir,omitempty"`
	// Custom is the latest data of each custom entry type on the branch
	// (ctx.session.lastCustom answers from it and from the call's own
	// appendCustom calls).
	Custom map[string]json.RawMessage `json:"custom,omitempty"`
	// Subagents says ctx.spawnSubagent exists (depth 0, task active).
	Subagents bool `json:"subagents,omitempty"`
	// Nested says ctx.tools and ctx.session reach a session.
	Nested bool `json:"nested,omitempty"`
	// ThinkingLevel and ActiveTools are ctx.thinkingLevel and
	// ctx.activeTools (the turn's active tool names).
	ThinkingLevel string   `json:"thinkingLevel,omitempty"`
	ActiveTools   []string `json:"activeTools,omitempty"`
	// ReadFiles are the files the session has read (ctx.readFiles; write
	// and edit need a prior read of an existing file).
	ReadFiles []string `json:"readFiles,omitempty"`
	// MaxResultChars, Checkpoint and Tasks are ctx.maxResultChars,
	// ctx.checkpoint (present) and ctx.tasks (the snapshot; nil: absent).
	// See ctxviews.go.
	MaxResultChars int                `json:"maxResultChars,omitempty"`
	Checkpoint     bool               `json:"checkpoint,omitempty"`
	Tasks          *[]agents.TaskInfo `json:"tasks,omitempty"`
}

type wireResult struct {
	Content json.RawMessage `json:"content"` // a string or content blocks
	IsError bool            `json:"isError"`
	Details json.RawMessage `json:"details,omitempty"`
	// Structured is what a codemode script's tools.<name>() resolves to.
	Structured json.RawMessage `json:"structured,omitempty"`
	// Terminate asks to end the run after this batch (only when every
	// result of the batch asks it).
	Terminate bool `json:"terminate"`
}

// Execute calls the adapter's execute. ctx ending sends cancel, which
// aborts the tool's ctx.signal; the call then ends as aborted.
func (t *Tool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	h := t.h
	notRunning := tools.ErrorResult("Tool " + t.def.Name + " failed: host adapter " + h.id + " is not running")
	if !h.Alive() {
		return notRunning, nil
	}
	// The adapter's nested requests end with the call at the latest. They
	// name the call by its callRef, unique in this process: toolCallIds
	// come from the model and may repeat across sessions (a sub-agent's
	// call must never reach its parent's session, nor the reverse).
	callCtx, endCall := context.WithCancel(ctx)
	defer endCall()
	h.mu.Lock()
	info := h.info
	h.nextRef++
	ref := "c" + strconv.FormatInt(h.nextRef, 10)
	lc := liveCall{id: call.ID, cs: call.Session, ctx: callCtx, env: call.Env}
	if call.Update != nil {
		lc.update = func(partial any) { call.Update(partialText(partial)) }
	}
	h.calls[ref] = lc
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.calls, ref)
		h.mu.Unlock()
	}()
	tc := toolContext{SessionID: info.ID, SessionFile: info.File, Model: info.Model, Cwd: info.Cwd}
	if call.Env != nil {
		tc.Cwd, tc.OutputDir, tc.Depth = call.Env.Cwd, call.Env.OutputDir, call.Env.Depth
		tc.Subagents = call.Env.Depth == 0 && call.Env.Tasks != nil && call.Session != nil
		tc.ReadFiles = call.Env.Reads.Paths()
	}
	if call.Session != nil {
		st := call.Session.State()
		tc.Nested, tc.ThinkingLevel, tc.ActiveTools = true, st.ThinkingLevel, st.ActiveTools
		tc.Subagents = tc.Subagents && slices.Contains(st.ActiveTools, "task") // task enabled, as SpawnSubagent requires
		if len(st.Custom) > 0 {
			tc.Custom = st.Custom
		}
	}
	fillViews(&tc, call)
	input := call.Args
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	params := map[string]any{"name": t.def.Name, "toolCallId": call.ID, "callRef": ref, "input": input, "context": tc}
	var res wireResult
	done := make(chan error, 1)
	go func() { done <- h.conn.Call(context.Background(), "execute", params, &res) }()
	select {
	case err := <-done:
		if errors.Is(err, jsonrpc2.ErrClosed) || (err != nil && !h.Alive()) {
			return notRunning, nil
		}
		if err != nil {
			return tools.ErrorResult("Tool " + t.def.Name + " failed: host adapter: " + err.Error()), nil
		}
	case <-ctx.Done():
		_ = h.conn.Notify(context.Background(), "cancel", map[string]string{"toolCallId": call.ID, "callRef": ref})
		return nil, ctx.Err()
	case <-h.gone:
		return notRunning, nil
	}
	out := &tools.Result{IsError: res.IsError, Terminate: res.Terminate}
	var text string
	var blocks []json.RawMessage
	if json.Unmarshal(res.Content, &text) == nil {
		out.Content = []llm.Content{llm.Text(text)}
	} else if err := json.Unmarshal(res.Content, &blocks); err != nil && len(res.Content) > 0 && string(res.Content) != "null" {
		return tools.ErrorResult(fmt.Sprintf("Tool %s returned invalid content: %v", t.def.Name, err)), nil
	}
	for _, raw := range blocks {
		c, err := llm.DecodeContent(raw)
		if err != nil {
			return tools.ErrorResult(fmt.Sprintf("Tool %s returned invalid content: %v", t.def.Name, err)), nil
		}
		out.Content = append(out.Content, c)
	}
	if len(res.Details) > 0 && string(res.Details) != "null" {
		out.Details = res.Details
	}
	if len(res.Structured) > 0 && string(res.Structured) != "null" {
		out.Structured = res.Structured
	}
	return out, nil
}

// partialText renders an onUpdate partial: a string as is, a ToolResult's
// text blocks joined, anything else as JSON.
func partialText(p any) string {
	switch v := p.(type) {
	case string:
		return v
	case map[string]any:
		if s, ok := v["content"].(string); ok {
			return s
		}
		if list, ok := v["content"].([]any); ok {
			var parts []string
			for _, b := range list {
				if m, ok := b.(map[string]any); ok {
					if s, ok := m["text"].(string); ok {
						parts = append(parts, s)
					}
				}
			}
			return strings.Join(parts, "")
		}
	}
	b, _ := json.Marshal(p)
	return string(b)
}

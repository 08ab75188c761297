package agents

import "strings"

// This file is the driver table of external agents (agents.md §8.2): per
// agent id its label and candidate chain, first installed candidate that
// supports the mode wins. Program names, arguments, labels and verified
// version ranges are those of ama's table (src/drivers/catalog.ts);
// one-shot print-mode candidates are left out (not implemented here).

// Driver kinds.
const (
	kindACP          = "acp"         // the agent speaks ACP itself
	kindACPAdapter   = "acp-adapter" // an installed ACP adapter of the CLI
	kindClaudeStream = "claude-stream"
	kindCodexApp     = "codex-app-server"
)

// candidate is one way to run an agent.
type candidate struct {
	kind    string
	program string
	args    []string
	// verified is the tested version range (">=x.y.z <x.y.z"); outside it
	// the agent still starts, with a warning.
	verified string
	// modes maps ama modes to the agent's ACP mode ids (nil: same id).
	modes map[string]string
	// planOnly: the agent runs only read-only tasks (unreliable approvals).
	planOnly bool
}

// driverEntry is one agent of the table.
type driverEntry struct {
	id, label  string
	candidates []candidate
}

// The ACP mode ids of agents whose ids differ from ama's; never a mode
// that lifts every permission.
var (
	claudeACPModes = map[string]string{"plan": "plan", "default": "default", "auto-edit": "acceptEdits", "auto": "auto", "full-auto": "auto"}
	codexACPModes  = map[string]string{"plan": "read-only", "default": "read-only", "auto-edit": "workspace-write", "auto": "agent", "full-auto": "agent"}
)

const copilotMode = "https://agentclientprotocol.com/protocol/session-modes#"

var driverTable = []driverEntry{
	{AgentClaude, "Claude Code", []candidate{
		{kind: kindACPAdapter, program: "claude-agent-acp", modes: claudeACPModes},
		{kind: kindClaudeStream, program: "claude", verified: ">=2.1.0 <3.0.0"},
	}},
	{AgentCodex, "Codex", []candidate{
		{kind: kindACPAdapter, program: "codex-acp", modes: codexACPModes},
		{kind: kindCodexApp, program: "codex", args: []string{"app-server"}, verified: ">=0.160.0 <0.200.0"},
	}},
	{"gemini", "Gemini CLI", []candidate{{kind: kindACP, program: "gemini", args: []string{"--acp"}}}},
	{"qwen", "Qwen Code", []candidate{{kind: kindACP, program: "qwen", args: []string{"--acp"}, planOnly: true}}},
	{"kimi", "Kimi Code", []candidate{{kind: kindACP, program: "kimi", args: []string{"acp"}}}},
	{"opencode", "OpenCode", []candidate{{kind: kindACP, program: "opencode", args: []string{"acp"}}}},
	{"copilot", "GitHub Copilot CLI", []candidate{{kind: kindACP, program: "copilot", args: []string{"--acp", "--stdio"},
		modes: map[string]string{"plan": copilotMode + "plan", "default": copilotMode + "agent", "auto-edit": copilotMode + "agent",
			"auto": copilotMode + "agent", "full-auto": copilotMode + "agent"}}}},
	{"goose", "Goose", []candidate{{kind: kindACP, program: "goose", args: []string{"acp"}}}},
	{"ama", "ama", []candidate{{kind: kindACP, program: "ama", args: []string{"--mode", "acp"}}}},
}

// driverFor returns the table entry of an agent id (nil: none).
func driverFor(id string) *driverEntry {
	for i := range driverTable {
		if driverTable[i].id == id {
			return &driverTable[i]
		}
	}
	return nil
}

// candidatesFor is the candidate chain of an external agent name:
// acp:<program> is the table's ACP candidate of that program (its
// arguments and modes) or a plain ACP start without arguments; other
// names are the table's chain (nil: not an external agent).
func candidatesFor(agent string) []candidate {
	if program, ok := strings.CutPrefix(agent, "acp:"); ok {
		if program == "" {
			return nil
		}
		for _, e := range driverTable {
			for _, c := range e.candidates {
				if c.kind == kindACP && c.program == program {
					return []candidate{c}
				}
			}
		}
		return []candidate{{kind: kindACP, program: program}}
	}
	if agent == "ama" { // bare ama is the sub-session runner; ama over ACP is acp:ama
		return nil
	}
	if e := driverFor(agent); e != nil {
		return e.candidates
	}
	return nil
}

// agentLabel names an external agent in texts: the table's label, or
// "ACP agent <program>".
func agentLabel(agent string) string {
	if program, ok := strings.CutPrefix(agent, "acp:"); ok {
		return "ACP agent " + program
	}
	if e := driverFor(agent); e != nil {
		return e.label
	}
	return agent
}

package tools

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/armadra/ama-rpc/llm"
)

// CommandSandbox runs shell commands in an OS sandbox (package sandbox
// provides one per session and mode).
type CommandSandbox interface {
	// Wrap rewrites a command that has not started so it runs inside the
	// sandbox, keeping its pid and process group; release is called once
	// cmd.Start returned. An error means the command must not run at all
	// (the permission pipeline may have allowed it only because it would
	// be sandboxed).
	Wrap(cmd *exec.Cmd) (release func(), err error)
	// DenialHint returns the one-line [sandbox: …] hint when the output of
	// a failed command looks like a sandbox refusal, else "".
	DenialHint(output string) string
}

// BashSandboxDecl changes the bash declaration for an active sandbox.
type BashSandboxDecl struct {
	NetworkDenied bool
}

// bashSandboxSchema is bashSchema plus the sandbox parameter.
const bashSandboxSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string"},
    "timeoutMs": {"type": "integer"},
    "cwd": {"type": "string", "description": "Working directory (defaults to the project directory)"},
    "description": {"type": "string"},
    "background": {"type": "boolean"},
    "job": {"type": "string"},
    "action": {"type": "string", "enum": ["wait", "output", "stop"]},
    "sandbox": {"type": "boolean", "description": "false runs the command outside the OS sandbox (needs approval)"}
  },
  "additionalProperties": false
}`

// decl is the bash declaration; nil means no sandbox (byte-identical to the
// plain declaration).
func (s *BashSandboxDecl) decl() llm.ToolDecl {
	if s == nil {
		return decl(NameBash, bashSchema)
	}
	d := decl(NameBash, bashSandboxSchema)
	limits := "writes are limited to the project and temp directories and credential files are unreadable"
	if s.NetworkDenied {
		limits += ", and there is no network access"
	}
	d.Description += fmt.Sprintf("\n\nCommands run in an OS sandbox: %s. If a command fails because of the sandbox, "+
		"rerun it with sandbox:false, which runs it outside the sandbox and needs the user's approval.", limits)
	return d
}

// callSandbox is the sandbox of one call: the session's, unless the call
// says sandbox:false.
func callSandbox(env *Env, a bashArgs) CommandSandbox {
	if env == nil || env.Sandbox == nil || (a.Sandbox != nil && !*a.Sandbox) {
		return nil
	}
	return env.Sandbox
}

// wrapSandbox wraps cmd when the call runs sandboxed and returns the
// sandbox (nil: runs bare) and the release to call after cmd.Start.
func wrapSandbox(env *Env, a bashArgs, cmd *exec.Cmd) (CommandSandbox, func(), error) {
	return wrapWith(callSandbox(env, a), cmd)
}

func wrapWith(sb CommandSandbox, cmd *exec.Cmd) (CommandSandbox, func(), error) {
	if sb == nil {
		return nil, func() {}, nil
	}
	release, err := sb.Wrap(cmd)
	if err != nil {
		return nil, nil, fmt.Errorf("Cannot start the command in the OS sandbox, so it was not run: %s", strings.TrimSpace(err.Error()))
	}
	return sb, release, nil
}

package approvals

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Call is one tool call to judge.
type Call struct {
	Tool  string          // tool name: read, write, edit, bash, grep, glob, ls, todo, task, memory, or a host tool
	Class Class           // the tool's permission class
	Input json.RawMessage // the arguments as the model sent them
	Cwd   string          // absolute session directory = project root
	Home  string          // absolute HOME for ~ and $HOME
}

// callCtx is a call prepared for the pipeline: input decoded, path
// resolved, bash command analysed.
type callCtx struct {
	call     Call
	tool     string // lower case
	class    Class  // effective class (memory and background queries resolved)
	invalid  string // why the input cannot be judged ("" = fine)
	isBash   bool
	bgQuery  bool // bash {job, action} without a command: a read
	command  string
	bash     *Analysis
	isMemory bool
	memCmd   string
	memPaths []string
	hasPath  bool // the tool operates on a file path
	path     string
	pathOK   bool
	action   string // todo action
}

// knownPathTools take a path argument that defaults to the working
// directory when it is missing.
var knownPathTools = map[string]bool{
	"read": true, "write": true, "edit": true, "ls": true, "grep": true, "glob": true,
}

func newCallCtx(call Call) *callCtx {
	c := &callCtx{call: call, tool: strings.ToLower(strings.TrimSpace(call.Tool)), class: call.Class}
	c.call.Cwd, c.call.Home = cleanDir(call.Cwd), cleanDir(call.Home)
	obj := map[string]json.RawMessage{}
	raw := bytes.TrimSpace(call.Input)
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &obj); err != nil {
			c.invalid = "the tool arguments are not a JSON object"
		}
	}
	str := func(key string) (string, bool, bool) { // value, present, is a string
		v, ok := obj[key]
		if !ok {
			return "", false, false
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", true, false
		}
		return s, true, true
	}
	switch {
	case c.tool == "bash":
		c.isBash, c.class = true, ClassExecute
		cmd, present, isStr := str("command")
		_, hasJob := obj["job"]
		switch {
		case present && isStr:
			c.command = cmd
			c.bash = AnalyzeShell(cmd, c.call.Cwd, c.call.Home)
		case !present && hasJob:
			c.bgQuery, c.class = true, ClassRead
		case c.invalid == "":
			c.invalid = "the bash call has no command string"
		}
		return c
	case call.Class == ClassMemory || c.tool == "memory":
		c.isMemory = true
		cmd, _, _ := str("command")
		c.memCmd = cmd
		c.class = ClassExecute
		if cmd == "view" {
			c.class = ClassRead
		}
		for _, k := range [...]string{"path", "old_path", "new_path"} {
			if p, _, ok := str(k); ok {
				c.memPaths = append(c.memPaths, p)
			}
		}
		return c
	}
	switch c.class {
	case ClassRead, ClassWrite, ClassExecute:
	default:
		c.class = ClassExecute // unknown classes fail closed
	}
	if c.tool == "todo" {
		c.action, _, _ = str("action")
		if c.action == "get" {
			c.class = ClassRead // reading the list changes nothing
		}
	}
	p, present, isStr := str("path")
	if !present {
		p, present, isStr = str("file_path")
	}
	switch {
	case present && !isStr:
		c.hasPath = true
		if c.invalid == "" {
			c.invalid = "the path argument is not a string"
		}
	case present:
		c.hasPath = true
		c.path, c.pathOK = resolveToolPath(p, c.call.Cwd, c.call.Home)
	case knownPathTools[c.tool]:
		c.hasPath = true
		c.path, c.pathOK = c.call.Cwd, c.call.Cwd != ""
	}
	return c
}

package approvals

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
)

// Call is one tool call to judge.
type Call struct {
	Tool  string          // tool name: read, write, edit, bash, grep, glob, ls, todo, task, memory, or a host tool
	Class Class           // the tool's permission class
	Input json.RawMessage // the arguments as the model sent them
	Cwd   string          // absolute session directory = project root
	Home  string          // absolute HOME for ~ and $HOME
	// Facts is what the call really touches, looked up on disk by the
	// caller (tools.Resolve). nil: the input is judged lexically only.
	Facts *Facts
}

// Facts is the resolved interpretation of a call, built by the tools
// package (which does the I/O; this package does none). With Facts the
// verdict judges the files the call will really act on: deny rules hit when
// either the lexical or the resolved path matches, allow rules and the
// "inside the project" checks need the resolved path.
type Facts struct {
	// Root and Home are the project root and HOME with symlinks resolved.
	Root, Home string
	// Path is the target of a file tool with symlinks resolved (absolute,
	// cleaned). "" with PathErr set when it cannot be resolved.
	Path    string
	PathErr string
	// Shell is the analysis of a bash command, run in the resolved working
	// directory (the cwd argument) with its targets resolved
	// (Analysis.WithRealPaths).
	Shell *Analysis
}

// spelling is one way of naming the path of a file tool call, with the
// directories relative rule patterns and ~ are matched against.
type spelling struct {
	path, cwd, home string
	real            bool // names the file the call acts on
}

// callCtx is a call prepared for the pipeline: input decoded, path
// resolved, bash command analysed.
type callCtx struct {
	call     Call
	noAllow  bool   // an ask rule matched: no allow tier may lift the call
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
	hasPath  bool   // the tool operates on a file path
	path     string // the path judged: resolved when Facts are given
	pathOK   bool
	root     string     // project root path is judged against
	lexPath  string     // the lexical reading of the path argument
	spells   []spelling // names of the path for rule matching
	action   string     // todo action
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
		case present && isStr && call.Facts != nil && call.Facts.Shell != nil:
			c.command, c.bash = cmd, call.Facts.Shell
		case present && isStr:
			c.command = cmd
			dir := c.call.Cwd
			if d, ok, isStr := str("cwd"); ok && isStr && d != "" {
				dir, _ = resolveToolPath(d, c.call.Cwd, c.call.Home) // "" when unknown: paths become dynamic
			} else if ok && !isStr && c.invalid == "" {
				c.invalid = "the cwd argument is not a string"
			}
			c.bash = AnalyzeShellIn(cmd, dir, c.call.Cwd, c.call.Home)
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
	if c.hasPath {
		c.resolvePath(call.Facts)
	}
	return c
}

// resolvePath folds the resolved path of Facts into the call: the resolved
// path is the one judged; rules see every spelling.
func (c *callCtx) resolvePath(f *Facts) {
	c.root, c.lexPath = c.call.Cwd, c.path
	if c.pathOK {
		c.spells = []spelling{{path: c.path, cwd: c.call.Cwd, home: c.call.Home, real: f == nil}}
	}
	if f == nil {
		return
	}
	if f.Path == "" {
		c.path, c.pathOK = "", false
		if c.invalid == "" {
			c.invalid = "the path cannot be resolved (" + cmpOr(f.PathErr, "unknown error") + ")"
		}
		return
	}
	root, home := cmpOr(cleanDir(f.Root), c.call.Cwd), cmpOr(cleanDir(f.Home), c.call.Home)
	c.path, c.pathOK, c.root = path.Clean(f.Path), true, root
	c.spells = append(c.spells, spelling{path: c.path, cwd: root, home: home, real: true})
	// The same file named through the unresolved project root and HOME
	// (rules are written with those names).
	if cwd := c.call.Cwd; cwd != "" && cwd != root && within(c.path, root) {
		c.spells = append(c.spells, spelling{path: cwd + strings.TrimPrefix(c.path, root), cwd: cwd, home: c.call.Home, real: true})
	} else if h := c.call.Home; h != "" && h != home && within(c.path, home) {
		c.spells = append(c.spells, spelling{path: h + strings.TrimPrefix(c.path, home), cwd: c.call.Cwd, home: h, real: true})
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

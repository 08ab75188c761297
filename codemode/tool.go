package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

// Name is the tool's name.
const Name = tools.NameCodemode

// StoreType is the customType of the store's session entries.
const StoreType = "ama.codemode-store"

const schemaJSON = `{"type":"object","properties":{"script":{"type":"string","description":"Raw JavaScript (async function body)"}},"required":["script"]}`

// Config builds a Tool.
type Config struct {
	Mode Mode
	// Direct are the tools the model calls directly (the `on` layout
	// names them; empty in `only`).
	Direct []string
	// Restrict limits scripts to the session's active tools (coordinator).
	Restrict bool
	// List returns every registered tool when a script starts or the
	// description is built (host tools registered later included).
	List func() []tools.Tool
	// Exe is the program started as the script process (ama-rpc itself,
	// or a test binary linking this package): it is run with ChildArg.
	Exe string
	// InlineBudget bounds the inlined declarations (`only`), estimated
	// tokens; 0: 3000.
	InlineBudget int
	// MaxHeapMB caps a script process's heap; 0: 256, negative: no cap.
	MaxHeapMB int
	// MaxCalls bounds the tools.<name>() calls of one script; 0: 1000.
	MaxCalls int
	// MaxResultChars is tools.maxToolResultChars; 0: tools.MaxResultChars.
	MaxResultChars int
}

// Tool is the codemode tool. Safe for concurrent use: each Execute starts
// its own script process.
type Tool struct {
	cfg  Config
	exe  string
	mu   sync.Mutex
	decl *llm.ToolDecl // frozen once the tool list is known
}

// New returns the tool. The description is built on the first Decl and
// then frozen for the process, so the request prefix stays byte-stable.
func New(cfg Config) *Tool {
	if cfg.InlineBudget <= 0 {
		cfg.InlineBudget = 3000
	}
	switch {
	case cfg.MaxHeapMB == 0:
		cfg.MaxHeapMB = 256
	case cfg.MaxHeapMB < 0:
		cfg.MaxHeapMB = 0
	}
	if cfg.MaxCalls <= 0 {
		cfg.MaxCalls = 1000
	}
	if cfg.MaxResultChars <= 0 {
		cfg.MaxResultChars = tools.MaxResultChars
	}
	if cfg.Exe == "" {
		cfg.Exe, _ = os.Executable()
	}
	return &Tool{cfg: cfg, exe: cfg.Exe}
}

var _ tools.Tool = (*Tool)(nil)

// Permission is read: a script can do nothing but its tool calls, each of
// which passes the gate itself (Strict).
func (t *Tool) Permission() string {
	if Strict {
		return tools.PermRead
	}
	return tools.PermExecute
}

// ExecutionMode makes a batch with codemode run in order.
func (t *Tool) ExecutionMode() string { return "sequential" }

// Decl is the declaration. The description names the other tools, so it
// is frozen at the first call that finds them (the registry reads Decl
// before the tool set is complete).
func (t *Tool) Decl() llm.ToolDecl {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.decl != nil {
		return *t.decl
	}
	d := llm.ToolDecl{Name: Name, Description: t.describe(), Parameters: json.RawMessage(schemaJSON)}
	if t.cfg.List != nil && len(t.cfg.List()) > 0 {
		t.decl = &d
	}
	return d
}

// callable are the registered tools a script may call, sorted by name.
func (t *Tool) callable(active []string) []tools.Tool {
	var out []tools.Tool
	if t.cfg.List == nil {
		return nil
	}
	for _, x := range t.cfg.List() {
		if c, ok := x.(*Tool); ok && c == t {
			continue // its own Decl would wait on t.mu
		}
		n := x.Decl().Name
		if n == Name || (t.cfg.Restrict && !slices.Contains(active, n)) {
			continue
		}
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Decl().Name < out[j].Decl().Name })
	return out
}

func (t *Tool) describe() string {
	var b strings.Builder
	b.WriteString("Run a JavaScript program that calls tools; only its output comes back to you. Batch independent calls with Promise.all, then filter, loop and summarise before returning.\n")
	b.WriteString("Input: raw JavaScript (not JSON, no code fence), the body of an async function: top-level await and return work. Reach tools only as tools.<name>(args); there is no require, import, process, fetch or timer.")
	if t.cfg.Mode == ModeOnly {
		b.WriteString(` An optional first line "// @options: {\"max_output_tokens\": N, \"timeout_ms\": M}" sets the output budget and the deadline.`)
	}
	b.WriteString("\nExample:\n")
	b.WriteString("const [a, b] = await Promise.all([\n  tools.read({ path: \"src/a.ts\" }),\n  tools.read({ path: \"src/b.ts\" }),\n]);\nconst todos = (a + \"\\n\" + b).split(\"\\n\").filter((l) => l.includes(\"TODO\"));\nreturn todos.join(\"\\n\");\n")
	b.WriteString("Globals: a tools.<name>() promise rejects when the call fails or is denied (Promise.allSettled keeps the rest); text(v) and console.log add output; return v adds v; store(key, value)/load(key) keep JSON across scripts; describeTool(name) gives a signature")
	if t.cfg.Mode == ModeOnly {
		b.WriteString("; ALL_TOOLS lists the callable names")
	}
	fmt.Fprintf(&b, ". At most %d calls run at once; every call is judged by the usual permissions.", maxInFlight)
	all := t.callable(t.cfg.Direct)
	switch t.cfg.Mode {
	case ModeOnly:
		decls := make([]llm.ToolDecl, len(all))
		for i, x := range all {
			decls[i] = x.Decl()
		}
		b.WriteString("\n" + declBlock(decls, t.cfg.InlineBudget))
	default:
		var direct, only []string
		for _, x := range all {
			n := x.Decl().Name
			if slices.Contains(t.cfg.Direct, n) {
				direct = append(direct, n)
			} else {
				only = append(only, n)
			}
		}
		if len(direct) > 0 {
			b.WriteString("\nYour direct tools are callable here too, same arguments: " + strings.Join(direct, ", "))
			if slices.Contains(direct, tools.NameBash) {
				b.WriteString(" (tools.bash resolves to BashResult; the others to text)\n" + bashResultDecl)
			}
		}
		if len(only) > 0 {
			b.WriteString("\nCallable only from scripts: " + strings.Join(only, ", ") + ".")
		}
	}
	return b.String()
}

// PromptSnippet is the tool's line in the system prompt's tool list.
func (t *Tool) PromptSnippet() string {
	if t.cfg.Mode == ModeOnly {
		return "codemode: runs a JavaScript program; it is your only tool, the others are called inside it as tools.<name>(args)"
	}
	return "codemode: runs a JavaScript program that calls several tools and returns only its output"
}

type args struct {
	Script string `json:"script"`
}

// Execute runs the script. Nested calls go through call.Session (the
// session's own gate: schema, PreToolUse, permission, approval, execution,
// PostToolUse) with the session's current mode.
func (t *Tool) Execute(ctx context.Context, call *tools.Call) (*tools.Result, error) {
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tools.ErrorResult("Invalid arguments for codemode: " + err.Error()), nil
	}
	opts, err := parseOptions(a.Script)
	if err != nil {
		return tools.ErrorResult(err.Error()), nil
	}
	if call.Session == nil {
		return tools.ErrorResult("codemode needs a session to run tools"), nil
	}
	state := call.Session.State()
	list := t.callable(state.ActiveTools)
	run := &runMsg{Type: "run", Script: a.Script, Store: loadStore(state.Custom[StoreType]),
		MaxHeapMB: t.cfg.MaxHeapMB, MaxCalls: t.cfg.MaxCalls}
	allowed := map[string]bool{}
	for _, x := range list {
		d := x.Decl()
		run.Tools = append(run.Tools, toolInfo{Name: d.Name, Declaration: declaration(d)})
		allowed[d.Name] = true
	}
	if run.Store == nil {
		run.Store = map[string]json.RawMessage{}
	}
	o := t.execute(ctx, run, opts, allowed, call.Session.ExecuteTool, call.Update)
	if o.ok && o.store != nil {
		if err := checkStore(o.store); err != nil {
			o.ok, o.err = false, "store was not saved: "+err.Error()
		} else {
			data, _ := json.Marshal(struct {
				Entries map[string]json.RawMessage `json:"entries"`
			}{o.store})
			call.Session.AppendCustom(StoreType, data)
		}
	}
	return t.result(call, opts, o), nil
}

// loadStore reads the entries of the branch's last store entry
// (malformed: empty).
func loadStore(raw json.RawMessage) map[string]json.RawMessage {
	var d struct {
		Entries map[string]json.RawMessage `json:"entries"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &d) != nil {
		return nil
	}
	return d.Entries
}

// checkStore validates the snapshot again in the parent: the child is
// not trusted to have kept the limits.
func checkStore(m map[string]json.RawMessage) error {
	total := 0
	for k, v := range m {
		if k == "" || !json.Valid(v) {
			return errors.New("invalid entry " + fmt.Sprintf("%q", k))
		}
		if len(v) > 262144 {
			return fmt.Errorf("value of %q is %d JSON characters, the limit is 262144", k, len(v))
		}
		total += len(v)
	}
	if total > 1048576 {
		return fmt.Errorf("the store holds %d JSON characters, the limit is 1048576", total)
	}
	return nil
}

// Details is the codemode result's details.
type Details struct {
	OK             bool   `json:"ok"`
	ElapsedMs      int64  `json:"elapsedMs"`
	ToolCalls      int    `json:"toolCalls"`
	TimedOut       bool   `json:"timedOut"`
	Aborted        bool   `json:"aborted"`
	Strict         bool   `json:"strict"`
	FullOutputPath string `json:"fullOutputPath,omitempty"`
	Error          string `json:"error,omitempty"`
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// result is the tool result: header, output (cut to the limit with the
// full text saved), error.
func (t *Tool) result(call *tools.Call, opts options, o *outcome) *tools.Result {
	out := strings.Join(o.items, "\n")
	if len(o.items) == 0 {
		out = "(no output)"
	}
	if o.discarded > 0 {
		out += fmt.Sprintf("\n[%d more characters of output were discarded]", o.discarded)
	}
	d := Details{OK: o.ok, ElapsedMs: o.elapsedMs, ToolCalls: o.toolCalls, TimedOut: o.timedOut, Aborted: o.aborted, Strict: Strict, Error: o.err}
	limit := max(1000, min(opts.maxOutputTokens*4, t.cfg.MaxResultChars-500))
	if r := []rune(out); len(r) > limit {
		half := limit / 2
		path := saveFull(call, out)
		where := ""
		if path != "" {
			where = "; full output: " + path
			d.FullOutputPath = path
		}
		out = string(r[:half]) + fmt.Sprintf("\n[... %d characters omitted%s ...]\n", len(r)-2*half, where) + string(r[len(r)-half:])
	}
	head := "Script completed in "
	if !o.ok {
		head = "Script failed in "
	}
	text := fmt.Sprintf("%s%.2fs\n\n%s", head, float64(o.elapsedMs)/1000, out)
	if !o.ok {
		text += "\n\nScript error: " + o.err
	}
	return &tools.Result{Content: []llm.Content{llm.Text(text)}, IsError: !o.ok, Details: d, AsText: true}
}

// saveFull writes the whole output to <outputDir>/<call id>.txt ("" when it
// cannot).
func saveFull(call *tools.Call, text string) string {
	dir := ""
	if call.Env != nil {
		dir = call.Env.OutputDir
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ama-codemode")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	name := unsafeID.ReplaceAllString(call.ID, "_")
	if name == "" {
		name = "codemode"
	}
	f, err := ownfs.CreateNew(dir, name+".txt", 0o600)
	if err != nil {
		var path string
		if f, path, err = ownfs.CreateTemp(dir, name+"-*.txt"); err != nil {
			return ""
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			return ""
		}
		return path
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		return ""
	}
	return filepath.Join(dir, name+".txt")
}

// PromptGuidelines are the system prompt's rules for the tool (`only`).
func (t *Tool) PromptGuidelines() []string {
	if t.cfg.Mode != ModeOnly {
		return nil
	}
	return []string{"read, edit, write, bash and the other tools cannot be called directly: call each one inside a codemode script as tools.<name>(args), and batch related calls in one script"}
}

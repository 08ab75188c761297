package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/armadra/ama-rpc/llm"
)

// Errors returned by Registry.
var (
	// ErrUnknownTool is returned (wrapped) by Validate for a name that is
	// not registered.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrDuplicateTool is returned by NewRegistry when two tools share a
	// name.
	ErrDuplicateTool = errors.New("duplicate tool name")

	errNoOutputDir = errors.New("no output directory configured")
)

// ArgsError is a schema validation failure. Its Error text lists one
// problem per line ("- edits[0]: missing property \"newText\""); the tool
// runner shows it to the model as "Invalid arguments for <name>:\n<Error()>".
type ArgsError struct {
	Problems []string
}

func (e *ArgsError) Error() string { return strings.Join(e.Problems, "\n") }

// Registry is an ordered, immutable set of tools with their compiled
// argument schemas. It is safe for concurrent use.
type Registry struct {
	tools   []Tool
	byName  map[string]int
	schemas []*argSchema
}

// Option configures Default.
type Option func(*options)

type options struct {
	inspect ShellInspector
	sandbox *BashSandboxDecl
}

// WithBashSandbox declares the bash tool for an active OS sandbox: the
// schema gains the sandbox parameter and the description one sentence.
// Without it the declaration is byte-identical to the plain one.
func WithBashSandbox(networkDenied bool) Option {
	return func(o *options) { o.sandbox = &BashSandboxDecl{NetworkDenied: networkDenied} }
}

// WithShellInspector sets the danger analysis the bash tool's previews
// use.
func WithShellInspector(f ShellInspector) Option {
	return func(o *options) { o.inspect = f }
}

// Default returns the built-in tools in name order: bash, edit, glob, grep,
// ls, read, todo, write. It does not depend on any session; per-session
// state comes in through Call.Env.
func Default(opts ...Option) *Registry {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	r := &Registry{byName: map[string]int{}}
	for _, t := range []Tool{&BashTool{Inspect: o.inspect, Sandbox: o.sandbox}, EditTool{}, GlobTool{}, GrepTool{}, LsTool{}, ReadTool{}, TodoTool{}, WriteTool{}} {
		if err := r.add(t, builtinSchema); err != nil {
			panic("tools: built-in registry: " + err.Error()) // a bug in a schema literal
		}
	}
	return r
}

// builtinSchemas holds the built-in tools' compiled schemas by their
// text, compiled once per process: they are constants (bash's in its
// three forms), and Default runs at every server and session start,
// where compiling them again was most of its CPU (the golden tests
// start a server per case).
// A compiled schema is read-only, so registries share it.
var builtinSchemas sync.Map // string(Parameters) -> *argSchema

func builtinSchema(d llm.ToolDecl) (*argSchema, error) {
	if s, ok := builtinSchemas.Load(string(d.Parameters)); ok {
		return s.(*argSchema), nil
	}
	s, err := compileSchema(d)
	if err == nil {
		builtinSchemas.Store(string(d.Parameters), s)
	}
	return s, err
}

// NewRegistry compiles the argument schema of every tool, in the given
// order. It fails on duplicate names and on schemas that do not compile.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]int, len(tools))}
	for _, t := range tools {
		if err := r.add(t, compileSchema); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// add appends t with its schema compiled by compile; r is still being
// built (registries are immutable once returned).
func (r *Registry) add(t Tool, compile func(llm.ToolDecl) (*argSchema, error)) error {
	d := t.Decl()
	if _, dup := r.byName[d.Name]; dup {
		return fmt.Errorf("%w: %s", ErrDuplicateTool, d.Name)
	}
	sch, err := compile(d)
	if err != nil {
		return err
	}
	r.byName[d.Name] = len(r.tools)
	r.tools = append(r.tools, t)
	r.schemas = append(r.schemas, sch)
	return nil
}

// With returns a new registry holding r's tools followed by more; r's
// tools keep their compiled schemas.
func (r *Registry) With(more ...Tool) (*Registry, error) {
	n := &Registry{byName: make(map[string]int, len(r.tools)+len(more)), tools: slices.Clone(r.tools), schemas: slices.Clone(r.schemas)}
	maps.Copy(n.byName, r.byName)
	for _, t := range more {
		if err := n.add(t, compileSchema); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Tools returns the tools in registry order.
func (r *Registry) Tools() []Tool { return append([]Tool(nil), r.tools...) }

// Names returns the tool names in registry order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.tools))
	for i, t := range r.tools {
		out[i] = t.Decl().Name
	}
	return out
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	i, ok := r.byName[name]
	if !ok {
		return nil, false
	}
	return r.tools[i], true
}

// Decls returns the declarations sent to the model, in registry order.
func (r *Registry) Decls() []llm.ToolDecl {
	out := make([]llm.ToolDecl, len(r.tools))
	for i, t := range r.tools {
		out[i] = t.Decl()
	}
	return out
}

// Validate checks args against the tool's schema. Empty args count as {}.
// It returns an error wrapping ErrUnknownTool for an unknown name and an
// *ArgsError listing the problems otherwise.
func (r *Registry) Validate(name string, args json.RawMessage) error {
	i, ok := r.byName[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownTool, name)
	}
	if p := r.schemas[i].validate(args); p != nil {
		return &ArgsError{Problems: p}
	}
	return nil
}

// Run is the whole life of one call as the model sees it: look the tool up,
// validate the arguments, execute (recovering from panics), turn failures
// into error results with the protocol's texts, and cap text blocks at
// the call's Limit. It never returns nil. Callers that need the steps apart
// (events between validation and execution, approvals) use Get, Validate
// and Execute themselves.
func (r *Registry) Run(ctx context.Context, name string, call *Call) *Result {
	if call == nil {
		call = &Call{}
	}
	t, ok := r.Get(name)
	if !ok {
		return ErrorResult("Tool " + name + " not found")
	}
	if err := r.Validate(name, call.Args); err != nil {
		return ErrorResult("Invalid arguments for " + name + ":\n" + err.Error())
	}
	return Execute(ctx, t, call)
}

// Execute runs t, turning a panic or an error return into an error result
// ("aborted by user" when ctx ended) and capping text blocks at the
// call's Limit. It never returns nil. After a panic the result's Details
// holds the stack (for logs, not for the model).
func Execute(ctx context.Context, t Tool, call *Call) (res *Result) {
	if call == nil {
		call = &Call{}
	}
	name := t.Decl().Name
	defer func() {
		if p := recover(); p != nil {
			res = ErrorResult(fmt.Sprintf("Tool %s failed: internal error: %v", name, p))
			res.Details = map[string]string{"panic": fmt.Sprint(p), "stack": string(debug.Stack())}
		}
	}()
	res, err := t.Execute(ctx, call)
	switch {
	case ctx.Err() != nil && err == nil && res != nil && res.IsError && llm.JoinText(res.Content, "") == abortedText:
		return res // the tool's own abort result keeps its details (task)
	case ctx.Err() != nil && (err != nil || res == nil || res.IsError):
		return ErrorResult(abortedText)
	case err != nil:
		return ErrorResult(err.Error())
	case res == nil:
		return ErrorResult("Tool " + name + " returned no result")
	}
	return LimitResult(call.Env, name, res, call.Limit())
}

// abortedText is the result of a call that the run's abort ended.
const abortedText = "aborted by user"

// location renders an instance location as edits[0].oldText ("arguments"
// for the root).
func location(tokens []string) string {
	if len(tokens) == 0 {
		return "arguments"
	}
	var b strings.Builder
	for _, tok := range tokens {
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

package host

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/agents"
	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/internal/jsonline"
	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

//go:embed bridge.cjs
var bridgeScript string

// APIVersion is HOST_API_VERSION.
const APIVersion = 1

// DefaultCreateTimeout bounds the adapter's create().
const DefaultCreateTimeout = 10 * time.Second

// Errors of Start: ErrLoad maps to exit 6, ErrVersion to exit 78.
var (
	ErrLoad    = errors.New("host_load_failed")
	ErrVersion = errors.New("host_version_mismatch")
)

// Protocol error codes the bridge answers initialize with.
const (
	codeLoadFailed      = -32010
	codeVersionMismatch = -32011
)

// SessionInfo is what session.id/file/cwd/model return.
type SessionInfo struct {
	ID    string        `json:"id"`
	File  string        `json:"file,omitempty"`
	Cwd   string        `json:"cwd"`
	Model *llm.ModelRef `json:"model,omitempty"`
}

// Options configure Start.
type Options struct {
	// Module is the adapter file (resolved against the process cwd).
	Module string
	// Command, instead of Module, is a program speaking the host protocol
	// itself (--host-cmd), run with sh -c.
	Command string
	// Node is the JavaScript runtime (AMA_NODE; default: node on PATH).
	Node string
	// Environ is the process environment as children get it (the
	// adapter's api.env and the child's environment): the caller scrubs it
	// with internal/childenv (nil: this process's, scrubbed).
	Environ []string
	// Cwd is the process working directory.
	Cwd string
	// Mode is api.mode ("rpc").
	Mode string
	// Version is ama-rpc's version (api.agent.version).
	Version string
	// Session is the startup session as create() sees it.
	Session SessionInfo
	// BuiltinTools are the registered built-in tools: a host tool may not
	// take their names, tools.list() lists them.
	BuiltinTools []string
	// ReservedTools are built-in names not registered (yet): taken, not
	// listed (task and task_ctl without sub-agents).
	ReservedTools []string
	// CreateTimeout bounds initialize (default DefaultCreateTimeout).
	CreateTimeout time.Duration
	// StartupTimeout bounds StartupSession's wait (default CreateTimeout;
	// tests shorten it alone, leaving create() its bound).
	StartupTimeout time.Duration
	// Stderr receives the bridge's stderr and the stderr copies of
	// notifications.
	Stderr io.Writer
	Log    *zap.Logger
	// Notify is the first ui.notify binding (see SetNotifier), in force
	// from create() on: the protocol's queue for what is announced before
	// it serves. nil: stderr only until SetNotifier.
	Notify func(level, message string) bool
}

// ToolDef is a tool the adapter registered.
type ToolDef struct {
	Name             string          `json:"name"`
	Label            string          `json:"label,omitempty"`
	Description      string          `json:"description"`
	Parameters       json.RawMessage `json:"parameters"`
	Permission       string          `json:"permission"`
	ExecutionMode    string          `json:"executionMode,omitempty"`
	Annotations      json.RawMessage `json:"annotations,omitempty"`
	PromptSnippet    string          `json:"promptSnippet,omitempty"`
	PromptGuidelines []string        `json:"promptGuidelines,omitempty"`
}

// Runner is a sub-agent runner the adapter provided (runners.provide).
type Runner struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

type instruction struct {
	Kind string `json:"kind"`
	Path string `json:"path,omitempty"`
	Text string `json:"text,omitempty"`
	Name string `json:"name,omitempty"`
}

// Host is a running host adapter. It implements session.Host.
type Host struct {
	opts Options
	log  *zap.Logger
	conn *jsonrpc2.Conn
	cmd  *exec.Cmd
	id   string

	exited chan struct{} // closed when the child has exited
	gone   chan struct{} // closed when the connection ended

	mu           sync.Mutex
	tools        []ToolDef // registered during create()
	late         []*lateTool
	disabled     map[string]bool
	instructions []instruction
	instrFiles   map[string]string // file sources, read once per process
	subs         map[string]bool
	broker       bool
	runners      []Runner
	status       map[string]string
	notifier     func(level, message string) bool
	cur          *session.Session
	info         SessionInfo
	skipStart    string // the startup session_start already delivered
	ready        bool
	shutdown     bool                                 // Dispose has begun
	shutdownSent bool                                 // session_shutdown was delivered
	calls        map[string]liveCall                  // running host tools by callRef (tool.update, ctx.tools, ctx.session, ctx.spawnSubagent)
	nextRef      int64                                // the last callRef's number
	nested       map[string]context.CancelFunc        // the adapter's nested calls by callId
	runEvents    map[string]func(agents.HostRunEvent) // by runner.start callId
	warmDecider  bool                                 // a cache.onWarmingDecision handler is registered
	initErr      error                                // a registration rejected during initialize

	askMu sync.Mutex                 // approvals are asked one at a time
	owed  atomic.Pointer[stdio.Owed] // where the bridge's requests are owed replies (SetOwed)

	evMu   sync.Mutex
	evQ    []evItem
	evWake chan struct{}
	evDone chan struct{}
}

type evItem struct {
	update  *SessionInfo // a session.update notification instead of an event
	name    string       // "" with update nil: a Flush marker
	payload any
	done    chan struct{}
}

// NodeRuntime finds the JavaScript runtime: explicit (AMA_NODE), else node
// on PATH, never in a PATH directory inside the project cwd
// (childenv.LookPath: a node planted in its .venv/bin would run the
// bridge). An Electron binary works: the child gets ELECTRON_RUN_AS_NODE=1.
func NodeRuntime(explicit, cwd string) (string, error) {
	name := explicit
	if name == "" {
		name = "node"
	}
	p, err := childenv.LookPath(name, cwd)
	if err != nil {
		return "", fmt.Errorf("%w: no JavaScript runtime for the host adapter: %q not found (install Node.js or set AMA_NODE to a node or Electron binary)", ErrLoad, name)
	}
	return p, nil
}

// Start launches the bridge (or the --host-cmd program), loads the adapter
// and runs its create(). It returns (nil, nil) when create returned
// undefined: ama continues without a host. Errors wrap ErrLoad or
// ErrVersion.
func Start(ctx context.Context, opts Options) (*Host, error) {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.CreateTimeout <= 0 {
		opts.CreateTimeout = DefaultCreateTimeout
	}
	if opts.StartupTimeout <= 0 {
		opts.StartupTimeout = opts.CreateTimeout
	}
	var cmd *exec.Cmd
	if opts.Command != "" {
		cmd = exec.Command("/bin/sh", "-c", opts.Command)
	} else {
		mod := opts.Module
		if !filepath.IsAbs(mod) {
			mod = filepath.Join(opts.Cwd, mod)
		}
		if fi, err := os.Stat(mod); err != nil || fi.IsDir() {
			return nil, fmt.Errorf("%w: host adapter %s does not exist", ErrLoad, mod)
		}
		opts.Module = mod
		node, err := NodeRuntime(opts.Node, opts.Cwd)
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(node, "-e", bridgeScript)
	}
	if opts.Environ == nil {
		opts.Environ = childenv.Environ(childenv.Policy{})
	}
	cmd.Dir = opts.Cwd
	cmd.Env = append(append([]string(nil), opts.Environ...), "ELECTRON_RUN_AS_NODE=1")
	cmd.Stdin = nil
	cmd.Stdout = opts.Stderr // the host's stdout is ama-rpc's protocol: never the child's
	cmd.Stderr = opts.Stderr
	toChildR, toChildW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: pipe: %v", ErrLoad, err)
	}
	fromChildR, fromChildW, err := os.Pipe()
	if err != nil {
		_ = toChildR.Close()
		_ = toChildW.Close()
		return nil, fmt.Errorf("%w: pipe: %v", ErrLoad, err)
	}
	cmd.ExtraFiles = []*os.File{toChildR, fromChildW} // fds 3 and 4
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{toChildR, toChildW, fromChildR, fromChildW} {
			_ = f.Close()
		}
		return nil, fmt.Errorf("%w: start the host bridge: %v (set AMA_NODE to a node or Electron binary)", ErrLoad, err)
	}
	_ = toChildR.Close()
	_ = fromChildW.Close()
	h := &Host{
		opts: opts, log: opts.Log, cmd: cmd, exited: make(chan struct{}),
		disabled: map[string]bool{}, subs: map[string]bool{}, status: map[string]string{},
		info: opts.Session, runEvents: map[string]func(agents.HostRunEvent){}, notifier: opts.Notify,
		calls: map[string]liveCall{}, nested: map[string]context.CancelFunc{}, instrFiles: map[string]string{},
		evWake: make(chan struct{}, 1), evDone: make(chan struct{}), gone: make(chan struct{}),
	}
	h.owed.Store(&stdio.Owed{Log: opts.Log})
	go func() { _ = cmd.Wait(); close(h.exited) }()
	// Closing the connection ends the child's input first, then ours.
	h.conn = jsonrpc2.NewConn(context.WithoutCancel(ctx), jsonline.NewStream(fromChildR, toChildW, jsonline.MaxLine), handlerFunc(h.serve))
	go func() { <-h.conn.DisconnectNotify(); _ = fromChildR.Close(); close(h.gone); h.lost() }()

	var res struct {
		Status string `json:"status"`
		ID     string `json:"id"`
	}
	params := map[string]any{
		"protocolVersion": APIVersion, "module": opts.Module, "agentVersion": opts.Version, "mode": opts.Mode,
		"env": environMap(opts.Environ), "session": opts.Session, "builtinTools": nonNil(opts.BuiltinTools),
		"reservedTools": nonNil(opts.ReservedTools),
	}
	cctx, cancel := context.WithTimeout(ctx, opts.CreateTimeout)
	err = h.conn.Call(cctx, "initialize", params, &res)
	cancel()
	if err != nil {
		h.kill()
		var je *jsonrpc2.Error
		switch {
		case errors.As(err, &je) && je.Code == codeVersionMismatch:
			return nil, fmt.Errorf("%w: %s", ErrVersion, je.Message)
		case errors.As(err, &je):
			return nil, fmt.Errorf("%w: %s", ErrLoad, je.Message)
		case errors.Is(err, context.DeadlineExceeded):
			return nil, fmt.Errorf("%w: host adapter create() did not settle within %s", ErrLoad, opts.CreateTimeout)
		}
		return nil, fmt.Errorf("%w: host bridge: %v", ErrLoad, err)
	}
	switch res.Status {
	case "inactive":
		h.kill()
		return nil, nil
	case "active":
		if res.ID == "" {
			h.kill()
			return nil, fmt.Errorf("%w: host adapter returned an empty id", ErrLoad)
		}
	default:
		h.kill()
		return nil, fmt.Errorf("%w: host bridge answered initialize with status %q", ErrLoad, res.Status)
	}
	h.mu.Lock()
	initErr := h.initErr
	h.id = res.ID
	h.mu.Unlock()
	if initErr != nil {
		h.kill()
		return nil, fmt.Errorf("%w: host adapter %s: %v", ErrLoad, res.ID, initErr)
	}
	go h.deliverEvents()
	return h, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func environMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// kill ends the child and the connection (startup failures).
func (h *Host) kill() {
	_ = h.conn.Close()
	if h.cmd.Process != nil {
		_ = h.cmd.Process.Kill()
	}
	<-h.exited
}

// ID is the adapter id.
func (h *Host) ID() string { return h.id }

// Alive reports whether the bridge still runs.
func (h *Host) Alive() bool {
	select {
	case <-h.gone:
		return false
	default:
		return true
	}
}

// lost reports a bridge that went away while ama-rpc still needed it.
func (h *Host) lost() {
	h.mu.Lock()
	quiet := h.shutdown || h.id == ""
	h.mu.Unlock()
	if quiet {
		return
	}
	h.Notify("error", "host adapter "+h.id+" exited; its tools are unavailable")
}

// Tools returns the host tools registered during create() and not
// disabled (those registered later join through ToolSet).
func (h *Host) Tools() []*Tool {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*Tool
	for _, d := range h.tools {
		if !h.disabled[d.Name] {
			out = append(out, &Tool{h: h, def: d})
		}
	}
	return out
}

// Disabled returns the names the adapter disabled (built-ins included).
func (h *Host) Disabled() map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]bool, len(h.disabled))
	for k, v := range h.disabled {
		out[k] = v
	}
	return out
}

// Runners lists the provided runners by id.
func (h *Host) Runners() []Runner {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]Runner(nil), h.runners...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Status returns the ui.setStatus items.
func (h *Host) Status() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]string, len(h.status))
	for k, v := range h.status {
		out[k] = v
	}
	return out
}

// Instructions renders the host section: the sources in call order, each
// trimmed, empty ones dropped, joined by a blank line. A file source is
// read once and kept for the life of the process (a read error is a
// warning and empty text), so the text only changes when the adapter adds
// a source; sessions take a change up at their next prompt.
func (h *Host) Instructions() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var parts []string
	for _, in := range h.instructions {
		text := in.Text
		if in.Kind == "file" {
			t, ok := h.instrFiles[in.Path]
			if !ok {
				data, err := ownfs.ReadUser(in.Path, ownfs.MaxConfig)
				if err != nil {
					h.log.Warn("host instructions file", zap.Error(err))
				}
				t = string(data)
				h.instrFiles[in.Path] = t
			}
			text = t
		}
		if t := strings.TrimSpace(text); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// SetNotifier binds ui.notify to the protocol (rpc mode: a notification
// event); nil unbinds it. fn reports false when it could not deliver.
func (h *Host) SetNotifier(fn func(level, message string) bool) {
	h.mu.Lock()
	h.notifier = fn
	h.mu.Unlock()
}

// Notify is ui.notify: the bound notifier plus a stderr copy, or stderr
// alone.
func (h *Host) Notify(level, message string) {
	switch level {
	case "info", "warn", "error":
	default:
		level = "info"
	}
	h.mu.Lock()
	fn := h.notifier
	h.mu.Unlock()
	if fn != nil && fn(level, message) {
		fmt.Fprintf(h.opts.Stderr, "ama: [%s] %s\n", level, message)
		return
	}
	if level == "info" {
		fmt.Fprintf(h.opts.Stderr, "ama: [host] %s\n", message)
	} else {
		fmt.Fprintf(h.opts.Stderr, "ama: [host %s] %s\n", level, message)
	}
}

// Ready marks the end of startup: the session exists (messages.sendUser
// no longer answers busy).
func (h *Host) Ready() {
	h.mu.Lock()
	h.ready = true
	h.mu.Unlock()
	_ = h.conn.Notify(context.Background(), "ready", struct{}{})
}

type handlerFunc func(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request)

func (f handlerFunc) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	f(ctx, conn, req)
}

// errDeferred says the handler took the request's reply (h.owe) and
// gives it later.
var errDeferred = errors.New("answered later")

func (h *Host) serve(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	res, err := h.handle(req)
	if errors.Is(err, errDeferred) {
		return
	}
	h.owe(req).send(res, err)
}

// reply is the one answer the bridge is owed for a request, and the one
// place host writes answers: serve gives it for a method that answers at
// once; a method that answers later takes its own (h.owe) to its
// goroutine and returns errDeferred. It is a stdio.Reply of the protocol
// server's owed replies (SetOwed), so the server's shutdown waits for it
// as for its own. A notification's answer is dropped (logged when its
// params were bad); a second answer is a bug (stdio.Reply.Send).
type reply struct {
	h   *Host
	req *jsonrpc2.Request
	r   *stdio.Reply
}

func (h *Host) owe(req *jsonrpc2.Request) *reply {
	return &reply{h: h, req: req, r: h.owed.Load().Owe("host " + req.Method)}
}

// SetOwed counts the bridge's requests among the replies o owes (the
// protocol server's, once it serves; before that the host's own, which
// nobody waits for). nil-safe (no host).
func (h *Host) SetOwed(o *stdio.Owed) {
	if h != nil {
		h.owed.Store(o)
	}
}

// send answers res ({} when nil), or the JSON-RPC error of err (an error
// that is not one is internal).
func (r *reply) send(res any, err error) { r.r.Send(func() { r.write(res, err) }) }

func (r *reply) write(res any, err error) {
	req, conn := r.req, r.h.conn
	if req.Notif {
		var je *jsonrpc2.Error
		if errors.As(err, &je) && je.Code == jsonrpc2.CodeInvalidParams {
			r.h.log.Warn("host notification dropped", zap.String("method", req.Method), zap.Error(err))
		}
		return
	}
	if err != nil {
		var je *jsonrpc2.Error
		if !errors.As(err, &je) {
			je = &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: err.Error()}
		}
		_ = conn.ReplyWithError(context.Background(), req.ID, je)
		return
	}
	if res == nil {
		res = struct{}{}
	}
	_ = conn.Reply(context.Background(), req.ID, res)
}

// handle serves the bridge's calls through the methods table. It runs on
// the connection's read goroutine, so notifications are handled in
// arrival order, before the response that follows them.
func (h *Host) handle(req *jsonrpc2.Request) (any, error) {
	m, ok := methods[req.Method]
	if !ok {
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "method not found: " + req.Method}
	}
	return m(h, req)
}

// method serves one method of the bridge. A handler that answers later
// takes the request's reply (h.owe) and returns errDeferred.
type method func(h *Host, req *jsonrpc2.Request) (any, error)

// on is a method whose params decode into P: a request whose params do not
// answers -32602 (docs/host-protocol.md), a notification's is logged.
func on[P any](fn func(h *Host, req *jsonrpc2.Request, p P) (any, error)) method {
	return func(h *Host, req *jsonrpc2.Request) (any, error) {
		var p P
		if req.Params != nil {
			if err := json.Unmarshal(*req.Params, &p); err != nil {
				return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: req.Method + ": " + err.Error()}
			}
		}
		return fn(h, req, p)
	}
}

// raw is a method that reads its params itself ({} when absent).
func raw(fn func(h *Host, req *jsonrpc2.Request, p json.RawMessage) (any, error)) method {
	return func(h *Host, req *jsonrpc2.Request) (any, error) { return fn(h, req, params(req)) }
}

type (
	named struct {
		Name string `json:"name"`
	}
	byID struct {
		ID string `json:"id"`
	}
	message struct{ Level, Message string }
	status  struct{ Key, Text string }
	toolRef struct {
		ToolCallID string          `json:"toolCallId"`
		CallRef    string          `json:"callRef"`
		Partial    json.RawMessage `json:"partial"`
	}
)

var methods = map[string]method{
	"tools.register": on(func(h *Host, _ *jsonrpc2.Request, d ToolDef) (any, error) {
		if err := h.register(d); err != nil {
			h.log.Error("host tool rejected", zap.Error(err))
			h.mu.Lock()
			if h.id == "" && h.initErr == nil {
				h.initErr = err
			}
			h.mu.Unlock()
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: err.Error()}
		}
		return nil, nil
	}),
	"tools.disable": on(func(h *Host, _ *jsonrpc2.Request, p named) (any, error) {
		h.locked(func() { h.disabled[p.Name] = true })
		return nil, nil
	}),
	"instructions.add": on(func(h *Host, _ *jsonrpc2.Request, in instruction) (any, error) {
		h.locked(func() { h.instructions = append(h.instructions, in) })
		return nil, nil
	}),
	"events.subscribe": on(func(h *Host, _ *jsonrpc2.Request, p named) (any, error) {
		h.locked(func() { h.subs[p.Name] = true })
		return nil, nil
	}),
	"approvals.setBroker": raw(func(h *Host, _ *jsonrpc2.Request, _ json.RawMessage) (any, error) {
		h.locked(func() { h.broker = true })
		return nil, nil
	}),
	"ui.notify": on(func(h *Host, _ *jsonrpc2.Request, p message) (any, error) {
		h.Notify(p.Level, p.Message)
		return nil, nil
	}),
	"ui.setStatus": on(func(h *Host, _ *jsonrpc2.Request, p status) (any, error) {
		h.locked(func() {
			if p.Text == "" {
				delete(h.status, p.Key)
			} else {
				h.status[p.Key] = p.Text
			}
		})
		return nil, nil
	}),
	"log": on(func(h *Host, _ *jsonrpc2.Request, p message) (any, error) {
		switch p.Level {
		case "warn", "error":
			fmt.Fprintf(h.opts.Stderr, "ama: [host] %s\n", p.Message)
		default:
			h.log.Debug("host: " + p.Message)
		}
		return nil, nil
	}),
	"runners.provide": on(func(h *Host, _ *jsonrpc2.Request, r Runner) (any, error) {
		h.locked(func() {
			if i := slices.IndexFunc(h.runners, func(x Runner) bool { return x.ID == r.ID }); i >= 0 {
				h.runners[i] = r
			} else {
				h.runners = append(h.runners, r)
			}
		})
		return nil, nil
	}),
	"runners.remove": on(func(h *Host, _ *jsonrpc2.Request, p byID) (any, error) {
		h.locked(func() {
			if i := slices.IndexFunc(h.runners, func(x Runner) bool { return x.ID == p.ID }); i >= 0 {
				h.runners = append(h.runners[:i:i], h.runners[i+1:]...)
			}
		})
		return nil, nil
	}),
	"cache.decider": on(func(h *Host, _ *jsonrpc2.Request, p struct{ Active bool }) (any, error) {
		h.locked(func() { h.warmDecider = p.Active })
		return nil, nil
	}),
	"runner.event": raw(func(h *Host, _ *jsonrpc2.Request, p json.RawMessage) (any, error) {
		h.runnerEvent(p)
		return nil, nil
	}),
	"tool.update": on(func(h *Host, _ *jsonrpc2.Request, p toolRef) (any, error) {
		lc, _ := h.findCall(p.ToolCallID, p.CallRef)
		if fn := lc.update; fn != nil {
			var partial any
			_ = json.Unmarshal(p.Partial, &partial) // absent: nil
			fn(partial)
		}
		return nil, nil
	}),
	"messages.sendUser": on(func(h *Host, req *jsonrpc2.Request, p struct{ Text, Origin string }) (any, error) {
		go h.sendUser(h.owe(req), p.Text, p.Origin)
		return nil, errDeferred
	}),
	"tool.executeTool": raw(func(h *Host, req *jsonrpc2.Request, p json.RawMessage) (any, error) {
		return nil, h.executeTool(h.owe(req), p)
	}),
	"tool.spawnSubagent": raw(func(h *Host, req *jsonrpc2.Request, p json.RawMessage) (any, error) {
		return nil, h.spawnSubagent(h.owe(req), p)
	}),
	"tool.cancel": on(func(h *Host, _ *jsonrpc2.Request, p struct {
		CallID string `json:"callId"`
	}) (any, error) {
		h.cancelNested(p.CallID)
		return nil, nil
	}),
	"session.appendCustom": raw(func(h *Host, _ *jsonrpc2.Request, p json.RawMessage) (any, error) {
		h.appendCustom(p)
		return nil, nil
	}),
	"session.markRead": raw(func(h *Host, _ *jsonrpc2.Request, p json.RawMessage) (any, error) {
		h.markRead(p)
		return nil, nil
	}),
	"checkpoint.beforeWrite": raw(func(h *Host, req *jsonrpc2.Request, p json.RawMessage) (any, error) {
		return nil, h.checkpointBeforeWrite(h.owe(req), p)
	}),
}

// locked runs fn with h.mu held.
func (h *Host) locked(fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn()
}

// register checks a tool definition again on the Go side (a --host-cmd
// host has no bridge validating for it).
func (h *Host) register(d ToolDef) error {
	if !validName(d.Name) {
		return fmt.Errorf("invalid tool name %q", d.Name)
	}
	switch d.Permission {
	case "read", "write", "execute":
	default:
		return fmt.Errorf("tool %s: permission must be read, write or execute", d.Name)
	}
	switch d.ExecutionMode {
	case "", "parallel", "sequential":
	default:
		return fmt.Errorf("tool %s: executionMode must be parallel or sequential", d.Name)
	}
	if len(bytes.TrimSpace(d.Parameters)) == 0 || string(d.Parameters) == "null" {
		d.Parameters = json.RawMessage(`{"type":"object"}`)
	}
	if problems := CheckSchema(d.Parameters); len(problems) > 0 {
		return fmt.Errorf("tool %s: %s", d.Name, strings.Join(problems, "; "))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range append(append([]string(nil), h.opts.BuiltinTools...), h.opts.ReservedTools...) {
		if n == d.Name {
			return fmt.Errorf("tool_exists: %s", d.Name)
		}
	}
	for _, t := range h.tools {
		if t.Name == d.Name {
			return fmt.Errorf("tool_exists: %s", d.Name)
		}
	}
	for _, t := range h.late {
		if t.def.Name == d.Name {
			return fmt.Errorf("tool_exists: %s", d.Name)
		}
	}
	if h.id == "" { // during create(): part of the start-up registry
		h.tools = append(h.tools, d)
		return nil
	}
	lt, err := newLateTool(h, d)
	if err != nil {
		return err
	}
	h.late = append(h.late, lt)
	return nil
}

func validName(n string) bool {
	if len(n) < 2 || len(n) > 64 || n[0] < 'a' || n[0] > 'z' {
		return false
	}
	for i := 1; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// sendUser is messages.sendUser: busy until the session exists, else a
// prompt that steers a running run.
func (h *Host) sendUser(r *reply, text, from string) {
	origin := llm.Origin(from)
	switch from {
	case "":
		origin = llm.OriginHost
	case "user":
		origin = "" // plain input
	}
	h.mu.Lock()
	ready, s := h.ready, h.cur
	h.mu.Unlock()
	if !ready || s == nil {
		r.send(nil, &jsonrpc2.Error{Code: -32000, Message: "busy: the session does not exist yet", Data: rawJSON(`{"code":"busy"}`)})
		return
	}
	s.Prompt(session.KindPrompt, session.PromptInput{Message: text, StreamingBehavior: session.QueueSteer, Origin: origin}, func(d session.Disposition, err error) {
		if err != nil {
			r.send(nil, &jsonrpc2.Error{Code: -32000, Message: err.Error()})
			return
		}
		r.send(string(d), nil)
	})
}

// params are a request's params ({} when absent).
func params(req *jsonrpc2.Request) json.RawMessage {
	if req.Params == nil {
		return json.RawMessage(`{}`)
	}
	return *req.Params
}

func rawJSON(s string) *json.RawMessage {
	r := json.RawMessage(s)
	return &r
}

package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/tools"
)

// Options configure a Set.
type Options struct {
	Log *zap.Logger
	// Cwd is the project directory: stdio servers run there.
	Cwd string
	// Env is the policy of the children's environment (the providers'
	// key variables hidden, tools.env.passthrough kept).
	Env childenv.Policy
	// StartTimeout bounds one server's start: spawn or connect, initialize
	// and the first tools/list (default 30 s).
	StartTimeout time.Duration
	// Version is ama-rpc's version, sent in initialize.
	Version string
	// Now is the clock of the restart back-off (nil: time.Now).
	Now func() time.Time
	// Changed, when set, is called after the tool table changed (on the
	// goroutine that changed it; tests wait on it).
	Changed func()
}

// Set is one session's MCP servers. Servers start on first use (Ready);
// their tools are Registry's.
type Set struct {
	opts    Options
	servers []*server
	// life ends at Close: starts and connections made with it stop.
	life    context.Context
	endLife context.CancelFunc
	reg     atomic.Pointer[tools.Registry]

	startOnce sync.Once
	started   chan struct{} // closed when every first start has ended

	mu       sync.Mutex
	problems []error // failures not reported yet (Ready hands them out once)
	closed   bool
	wg       sync.WaitGroup // monitors and list refreshes
}

// NewSet prepares the servers; nothing starts until Ready. problems are
// reported by the first Ready (configuration errors: the servers they
// name are left out).
func NewSet(servers []Server, problems []error, opts Options) *Set {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Set{opts: opts, problems: append([]error(nil), problems...), started: make(chan struct{})}
	s.life, s.endLife = context.WithCancel(context.Background())
	for _, c := range servers {
		s.servers = append(s.servers, &server{set: s, cfg: c, log: opts.Log.With(zap.String("mcpServer", c.Name))})
	}
	return s
}

// Empty reports a set with no servers and nothing to report.
func (s *Set) Empty() bool { return s == nil || len(s.servers) == 0 && len(s.problems) == 0 }

// Ready starts the servers the first time (in parallel) and waits until
// each has started or failed, or ctx ends. It returns the failures not
// reported before, each once: configuration errors, servers that did not
// start, crashes since the last call. Later calls do not wait.
func (s *Set) Ready(ctx context.Context) []error {
	if s == nil {
		return nil
	}
	s.startOnce.Do(func() {
		var wg sync.WaitGroup
		for _, srv := range s.servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				srv.start(s.life)
			}()
		}
		go func() { wg.Wait(); close(s.started) }()
	})
	select {
	case <-s.started:
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.problems
	s.problems = nil
	return out
}

// Registry is the tools of the servers now (nil: none). It changes when
// a server starts, crashes and restarts, or says its list changed; the
// session reads it at each model request.
func (s *Set) Registry() *tools.Registry {
	if s == nil {
		return nil
	}
	return s.reg.Load()
}

// Servers returns the names of the servers and whether each is running.
func (s *Set) Servers() map[string]bool {
	out := map[string]bool{}
	if s == nil {
		return out
	}
	for _, srv := range s.servers {
		srv.mu.Lock()
		out[srv.cfg.Name] = srv.cs != nil
		srv.mu.Unlock()
	}
	return out
}

// Close stops every server (stdio: stdin closed, then the process group
// killed) and waits for the set's goroutines. Safe to call more than once.
func (s *Set) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.endLife() // a start in progress gives up
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Add(1)
		go func() { defer wg.Done(); srv.stop() }()
	}
	wg.Wait()
	s.wg.Wait()
}

func (s *Set) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// report queues a failure for the next Ready and logs it.
func (s *Set) report(err error) {
	s.opts.Log.Warn("mcp server", zap.Error(err))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.problems = append(s.problems, err)
	}
}

// goTrack runs f on a goroutine Close waits for; false when closed.
func (s *Set) goTrack(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); f() }()
	return true
}

// rebuild makes the table from every server's current tools. A tool
// whose name is taken or whose schema does not compile is left out and
// reported once.
func (s *Set) rebuild() {
	var all []tools.Tool
	seen := map[string]bool{}
	for _, srv := range s.servers {
		for _, t := range srv.current() {
			if seen[t.name] {
				srv.reportOnce("dup:"+t.name, fmt.Errorf("MCP server %s: tool %q left out: the name %s is taken", srv.cfg.Name, t.orig, t.name))
				continue
			}
			if _, err := tools.NewRegistry(t); err != nil {
				srv.reportOnce("schema:"+t.name, fmt.Errorf("MCP server %s: tool %q left out: its input schema does not compile: %w", srv.cfg.Name, t.orig, err))
				continue
			}
			seen[t.name] = true
			all = append(all, t)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Decl().Name < all[j].Decl().Name })
	var reg *tools.Registry
	if len(all) > 0 {
		var err error
		if reg, err = tools.NewRegistry(all...); err != nil { // each compiled alone and names are unique: a bug
			s.opts.Log.Error("mcp tool table", zap.Error(err))
			return
		}
	}
	s.reg.Store(reg)
	if s.opts.Changed != nil {
		s.opts.Changed()
	}
}

// server is one configured server and its connection.
type server struct {
	set *Set
	cfg Server
	log *zap.Logger

	mu   sync.Mutex
	cs   *mcp.ClientSession // nil: not running
	proc *process           // the stdio child (nil otherwise)
	// cancelConn ends the context the connection was made with.
	cancelConn context.CancelFunc
	// ended is closed when the monitor has handled the connection's end.
	ended    chan struct{}
	tools    []*Tool
	crashes  int       // consecutive failed or crashed starts
	retryAt  time.Time // no restart before
	reported map[string]bool
	stopped  bool
	gen      int // connection generation (a monitor of an old one does nothing)
}

// errNotRunning is the text of a call to a server that is down.
var errNotRunning = errors.New("not running")

// backoff is the wait before restart n (n ≥ 1): none for the first,
// then 1 s doubling to 30 s.
func backoff(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	d := time.Second << (n - 2)
	if d > 30*time.Second || d <= 0 {
		d = 30 * time.Second
	}
	return d
}

// start connects (spawning a stdio server), initializes and lists the
// tools. A failure is reported and sets the back-off.
func (srv *server) start(ctx context.Context) {
	srv.mu.Lock()
	err := srv.connectLocked(ctx)
	if err != nil {
		srv.crashes++
		srv.retryAt = srv.set.opts.Now().Add(backoff(srv.crashes + 1))
	}
	srv.mu.Unlock()
	if err != nil {
		srv.set.report(fmt.Errorf("MCP server %s failed to start: %w", srv.cfg.Name, err))
		return
	}
	srv.set.rebuild()
}

// connectLocked runs with srv.mu held; the caller rebuilds the table
// after unlocking.
func (srv *server) connectLocked(ctx context.Context) error {
	if srv.stopped || srv.set.isClosed() {
		return errors.New("closed")
	}
	ctx, cancel := context.WithTimeout(ctx, srv.set.opts.StartTimeout)
	defer cancel()
	t, proc, err := srv.transport()
	if err != nil {
		return err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "ama", Version: srv.set.opts.Version}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			srv.set.goTrack(srv.relist)
		},
	})
	// The connection's context outlives the start (the sse transport
	// keeps its event stream on it); the timer bounds the start.
	connCtx, cancelConn := context.WithCancel(srv.set.life)
	timer := time.AfterFunc(srv.set.opts.StartTimeout, cancelConn)
	cs, err := client.Connect(connCtx, t, nil)
	if !timer.Stop() && err == nil {
		err = fmt.Errorf("no answer to initialize within %s", srv.set.opts.StartTimeout)
		_ = cs.Close()
	}
	if err != nil {
		cancelConn()
		proc.kill()
		return err
	}
	list, err := listTools(ctx, cs)
	if err != nil {
		_ = cs.Close()
		cancelConn()
		proc.kill()
		return fmt.Errorf("tools/list: %w", err)
	}
	srv.gen++
	srv.cs, srv.proc, srv.cancelConn = cs, proc, cancelConn
	srv.ended = make(chan struct{})
	srv.tools = srv.adapt(list)
	gen, ended := srv.gen, srv.ended
	srv.set.goTrack(func() { defer close(ended); srv.monitor(cs, gen) })
	srv.log.Info("mcp server started", zap.Int("tools", len(list)), zap.String("transport", srv.cfg.Transport))
	return nil
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if len(out) > maxToolsPerServer {
			return nil, fmt.Errorf("more than %d tools", maxToolsPerServer)
		}
	}
	return out, nil
}

// maxToolsPerServer bounds one server's table.
const maxToolsPerServer = 256

// transport builds the SDK transport of the server.
func (srv *server) transport() (mcp.Transport, *process, error) {
	switch srv.cfg.Transport {
	case TransportStdio:
		p, err := newProcess(srv.cfg, srv.set.opts, srv.log)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CommandTransport{Command: p.cmd, TerminateDuration: time.Second}, p, nil
	case TransportHTTP:
		return &mcp.StreamableClientTransport{Endpoint: srv.cfg.URL, HTTPClient: headerClient(srv.cfg.Headers), MaxRetries: -1}, nil, nil
	case TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: srv.cfg.URL, HTTPClient: headerClient(srv.cfg.Headers)}, nil, nil
	}
	return nil, nil, fmt.Errorf("unknown transport %q", srv.cfg.Transport)
}

// headerClient adds the configured headers to every request.
func headerClient(h map[string]string) *http.Client {
	if len(h) == 0 {
		return &http.Client{}
	}
	return &http.Client{Transport: headerRT{h: h, next: http.DefaultTransport}}
}

type headerRT struct {
	h    map[string]string
	next http.RoundTripper
}

func (rt headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range rt.h {
		r.Header.Set(k, v)
	}
	return rt.next.RoundTrip(r)
}

// monitor waits for the connection to end; an end nobody asked for is a
// crash: reported, the back-off armed, the child's group killed.
func (srv *server) monitor(cs *mcp.ClientSession, gen int) {
	err := cs.Wait()
	srv.mu.Lock()
	if srv.gen != gen || srv.stopped || srv.cs != cs {
		srv.mu.Unlock()
		return
	}
	srv.cs = nil
	proc := srv.proc
	srv.proc = nil
	if srv.cancelConn != nil {
		srv.cancelConn()
	}
	srv.crashes++
	srv.retryAt = srv.set.opts.Now().Add(backoff(srv.crashes))
	srv.mu.Unlock()
	proc.kill()
	why := "the connection ended"
	if err != nil {
		why += ": " + err.Error()
	}
	if code := proc.exitCode(); code != "" {
		why = "the process exited (" + code + ")"
	}
	srv.set.report(fmt.Errorf("MCP server %s stopped: %s; it is restarted at its next call", srv.cfg.Name, why))
}

// session returns the live connection, restarting a crashed server when
// its back-off has passed.
func (srv *server) session(ctx context.Context) (*mcp.ClientSession, error) {
	srv.mu.Lock()
	if cs := srv.cs; cs != nil {
		srv.mu.Unlock()
		return cs, nil
	}
	cs, err := srv.restartLocked(ctx)
	srv.mu.Unlock()
	if err == nil {
		srv.set.rebuild()
	}
	return cs, err
}

func (srv *server) restartLocked(ctx context.Context) (*mcp.ClientSession, error) {
	if srv.stopped {
		return nil, errors.New("the session is closing")
	}
	now := srv.set.opts.Now()
	if now.Before(srv.retryAt) {
		return nil, fmt.Errorf("%w (restart in %s)", errNotRunning, srv.retryAt.Sub(now).Round(time.Second))
	}
	if err := srv.connectLocked(ctx); err != nil {
		srv.crashes++
		srv.retryAt = srv.set.opts.Now().Add(backoff(srv.crashes))
		return nil, fmt.Errorf("%w: restart failed: %v", errNotRunning, err)
	}
	return srv.cs, nil
}

// afterFailure runs after a call on cs failed: when the connection is
// ending (EOF, closed), it waits (briefly) for the monitor to record the
// crash, so the next call restarts the server instead of meeting the dead
// connection.
func (srv *server) afterFailure(cs *mcp.ClientSession, err error) {
	if !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "closing") {
		return
	}
	srv.mu.Lock()
	ended := srv.ended
	same := srv.cs == cs
	srv.mu.Unlock()
	if !same || ended == nil {
		return
	}
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
	}
}

// relist reads the tool list again after tools/list_changed.
func (srv *server) relist() {
	srv.mu.Lock()
	cs := srv.cs
	srv.mu.Unlock()
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), srv.set.opts.StartTimeout)
	defer cancel()
	list, err := listTools(ctx, cs)
	if err != nil {
		srv.log.Warn("mcp tools/list after list_changed", zap.Error(err))
		return
	}
	srv.mu.Lock()
	if srv.cs != cs {
		srv.mu.Unlock()
		return
	}
	srv.tools = srv.adapt(list)
	srv.mu.Unlock()
	srv.log.Info("mcp tool list changed", zap.Int("tools", len(list)))
	srv.set.rebuild()
}

// current returns the server's tools (kept while it is down: a call then
// fails or restarts it).
func (srv *server) current() []*Tool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.tools
}

func (srv *server) reportOnce(key string, err error) {
	srv.mu.Lock()
	if srv.reported == nil {
		srv.reported = map[string]bool{}
	}
	done := srv.reported[key]
	srv.reported[key] = true
	srv.mu.Unlock()
	if !done {
		srv.set.report(err)
	}
}

// stop ends the connection for good.
func (srv *server) stop() {
	srv.mu.Lock()
	srv.stopped = true
	cs, proc, cancel := srv.cs, srv.proc, srv.cancelConn
	srv.cs, srv.proc = nil, nil
	srv.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
	if cancel != nil {
		cancel()
	}
	proc.kill()
}

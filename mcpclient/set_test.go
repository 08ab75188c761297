package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/test/testbin"
	"github.com/armadra/ama-rpc/tools"
)

// serverBin is the test MCP server (test/mcpserver/cmd), built once (or
// make test's build).
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpclient-test")
	if err != nil {
		panic(err)
	}
	if serverBin, err = testbin.Tool(dir, "mcpserver", "../test/mcpserver/cmd"); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func stdioServer(name string, env ...string) Server {
	return Server{Name: name, Transport: TransportStdio, Command: serverBin, Env: env, Source: SourceConfig}
}

func newTestSet(t *testing.T, servers []Server, opts Options) *Set {
	t.Helper()
	if opts.Cwd == "" {
		opts.Cwd = t.TempDir()
	}
	s := NewSet(servers, nil, opts)
	t.Cleanup(s.Close)
	return s
}

func ready(t *testing.T, s *Set) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if errs := s.Ready(ctx); len(errs) > 0 {
		t.Fatalf("Ready: %v", errs)
	}
}

func run(t *testing.T, s *Set, name, args string) *tools.Result {
	t.Helper()
	reg := s.Registry()
	if reg == nil {
		t.Fatalf("no tools")
	}
	return reg.Run(context.Background(), name, &tools.Call{ID: "c1", Args: json.RawMessage(args)})
}

func TestToolsAndResults(t *testing.T) {
	s := newTestSet(t, []Server{stdioServer("t")}, Options{})
	ready(t, s)
	names := s.Registry().Names()
	want := []string{"mcp__t__crash", "mcp__t__echo", "mcp__t__fail", "mcp__t__getenv", "mcp__t__grow", "mcp__t__rich", "mcp__t__slow", "mcp__t__write_marker"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("names = %v, want %v", names, want)
	}
	echo, _ := s.Registry().Get("mcp__t__echo")
	if echo.Permission() != tools.PermExecute {
		t.Errorf("untrusted readOnlyHint gave %s, want execute", echo.Permission())
	}
	if echo.(*Tool).MCPServer() != "t" {
		t.Errorf("server = %q", echo.(*Tool).MCPServer())
	}

	res := run(t, s, "mcp__t__echo", `{"text":"hi"}`)
	if res.IsError || llm.JoinText(res.Content, "") != "echo: hi" {
		t.Fatalf("echo = %+v", res)
	}
	d, ok := res.Details.(Details)
	if !ok || d.Server != "t" || d.Tool != "echo" {
		t.Fatalf("details = %#v", res.Details)
	}
	if b, _ := json.Marshal(d.StructuredContent); string(b) != `{"echo":"hi","length":2}` {
		t.Errorf("structured = %s", b)
	}

	// The server's schema is checked before any call reaches it.
	if err := s.Registry().Validate("mcp__t__echo", json.RawMessage(`{"text":5}`)); err == nil {
		t.Error("a number for text passed the schema")
	}
	if res := run(t, s, "mcp__t__echo", `{"text":5}`); !res.IsError || !strings.Contains(llm.JoinText(res.Content, ""), "Invalid arguments") {
		t.Errorf("invalid args = %+v", res)
	}

	res = run(t, s, "mcp__t__rich", `{}`)
	if len(res.Content) != 2 {
		t.Fatalf("rich = %+v", res.Content)
	}
	if img, ok := res.Content[0].(*llm.ImageContent); !ok || img.MimeType != "image/png" || img.Data == "" {
		t.Errorf("image = %#v", res.Content[0])
	}
	if txt := llm.JoinText(res.Content[1:], ""); !strings.Contains(txt, "file:///tmp/report.txt") {
		t.Errorf("link = %q", txt)
	}
	if d := res.Details.(Details); len(d.ResourceLinks) != 1 || d.ResourceLinks[0].URI != "file:///tmp/report.txt" {
		t.Errorf("links = %+v", d.ResourceLinks)
	}

	res = run(t, s, "mcp__t__fail", `{}`)
	if !res.IsError || !strings.Contains(llm.JoinText(res.Content, ""), "on purpose") {
		t.Errorf("fail = %+v", res)
	}
}

func TestTrustReadOnly(t *testing.T) {
	srv := stdioServer("t")
	srv.TrustReadOnly = true
	s := newTestSet(t, []Server{srv}, Options{})
	ready(t, s)
	for name, want := range map[string]string{"mcp__t__echo": tools.PermRead, "mcp__t__write_marker": tools.PermExecute} {
		tool, _ := s.Registry().Get(name)
		if tool.Permission() != want {
			t.Errorf("%s: %s, want %s", name, tool.Permission(), want)
		}
	}
}

// The child's environment is the scrubbed one plus the configured env;
// it runs in the project directory.
func TestChildEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret-provider-key")
	t.Setenv("MY_PROVIDER_KEY", "hidden-by-policy")
	s := newTestSet(t, []Server{stdioServer("t", "GIVEN=by-config")}, Options{})
	s.opts.Env.Hide = []string{"MY_PROVIDER_KEY"}
	ready(t, s)
	for args, want := range map[string]string{
		`{"name":"OPENAI_API_KEY"}`:  "OPENAI_API_KEY is unset",
		`{"name":"MY_PROVIDER_KEY"}`: "MY_PROVIDER_KEY is unset",
		`{"name":"GIVEN"}`:           "GIVEN=by-config",
	} {
		if got := llm.JoinText(run(t, s, "mcp__t__getenv", args).Content, ""); got != want {
			t.Errorf("getenv %s = %q, want %q", args, got, want)
		}
	}
	dir := s.opts.Cwd
	res := run(t, s, "mcp__t__write_marker", `{"path":"rel-marker"}`)
	if res.IsError {
		t.Fatal(llm.JoinText(res.Content, ""))
	}
	if _, err := os.Stat(filepath.Join(dir, "rel-marker")); err != nil {
		t.Errorf("the server did not run in the project directory: %v", err)
	}
}

// A server that dies mid-call gives an error result (not a hang), is
// reported once, and restarts at the next call.
func TestCrashAndRestart(t *testing.T) {
	s := newTestSet(t, []Server{stdioServer("t")}, Options{})
	ready(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := s.Registry().Run(ctx, "mcp__t__crash", &tools.Call{Args: json.RawMessage(`{}`)})
	if ctx.Err() != nil {
		t.Fatal("the call to a crashing server hung")
	}
	if !res.IsError {
		t.Fatalf("crash = %+v", res)
	}
	res = run(t, s, "mcp__t__echo", `{"text":"again"}`)
	if res.IsError || llm.JoinText(res.Content, "") != "echo: again" {
		t.Fatalf("after the crash: %+v", res)
	}
	var crashed bool
	for _, err := range s.Ready(context.Background()) {
		crashed = crashed || strings.Contains(err.Error(), "stopped")
	}
	if !crashed {
		t.Error("the crash was not reported")
	}
}

func TestBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 0, 2: time.Second, 3: 2 * time.Second, 7: 30 * time.Second, 80: 30 * time.Second} {
		if got := backoff(n); got != want {
			t.Errorf("backoff(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestStartFailureReportedOnce(t *testing.T) {
	s := newTestSet(t, []Server{stdioServer("bad", "MCPSERVER_FAIL=1"), stdioServer("good"),
		{Name: "missing", Transport: TransportStdio, Command: "/nonexistent/mcp-server"}}, Options{})
	errs := s.Ready(context.Background())
	if len(errs) != 2 {
		t.Fatalf("errors = %v, want 2", errs)
	}
	for _, e := range errs {
		if !strings.Contains(e.Error(), "failed to start") {
			t.Errorf("error %q", e)
		}
	}
	if again := s.Ready(context.Background()); len(again) != 0 {
		t.Errorf("reported twice: %v", again)
	}
	if _, ok := s.Registry().Get("mcp__good__echo"); !ok {
		t.Error("the good server's tools are missing")
	}
	res := run(t, s, "mcp__good__echo", `{"text":"x"}`)
	if res.IsError {
		t.Error(llm.JoinText(res.Content, ""))
	}
}

// tools/list_changed: the table is listed again.
func TestListChanged(t *testing.T) {
	changed := make(chan struct{}, 8)
	s := newTestSet(t, []Server{stdioServer("t")}, Options{Changed: func() { changed <- struct{}{} }})
	ready(t, s)
	<-changed // the first table
	if res := run(t, s, "mcp__t__grow", `{}`); res.IsError {
		t.Fatal(llm.JoinText(res.Content, ""))
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no table change after tools/list_changed")
	}
	if res := run(t, s, "mcp__t__added", `{}`); llm.JoinText(res.Content, "") != "added works" {
		t.Fatalf("added = %+v", res)
	}
}

// ctx ending aborts an in-flight call at once.
func TestCancel(t *testing.T) {
	s := newTestSet(t, []Server{stdioServer("t")}, Options{})
	ready(t, s)
	tool, _ := s.Registry().Get("mcp__t__slow")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *tools.Result)
	marker := filepath.Join(t.TempDir(), "slow")
	go func() {
		done <- tools.Execute(ctx, tool, &tools.Call{Args: json.RawMessage(`{"ms":60000,"marker":"` + marker + `"}`)})
	}()
	cancel()
	select {
	case res := <-done:
		if !res.IsError || llm.JoinText(res.Content, "") != "aborted by user" {
			t.Errorf("cancelled = %+v", res)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("cancel did not end the call")
	}
}

// Close kills the server's whole process group.
func TestCloseKillsProcess(t *testing.T) {
	s := NewSet([]Server{stdioServer("t")}, nil, Options{Cwd: t.TempDir()})
	ready(t, s)
	s.servers[0].mu.Lock()
	pid := s.servers[0].proc.cmd.Process.Pid
	s.servers[0].mu.Unlock()
	s.Close()
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still exists after Close (%v)", pid, err)
	}
	res := run(t, s, "mcp__t__echo", `{"text":"x"}`)
	if !res.IsError {
		t.Error("a call after Close ran")
	}
}

// Close during a start that gets no answer (a program that never speaks
// MCP) ends it at once instead of waiting for the start timeout.
func TestCloseDuringHangingStart(t *testing.T) {
	s := NewSet([]Server{{Name: "mute", Transport: TransportStdio, Command: "sleep", Args: []string{"600"}}}, nil,
		Options{Cwd: t.TempDir(), StartTimeout: 5 * time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Ready(ctx) // starts, does not wait
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for the hanging start")
	}
}

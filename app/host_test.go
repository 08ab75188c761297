package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/armadra/ama-rpc/app"
)

// runHost runs ama-rpc with a host adapter written to the cwd; env is the
// adapter's environment as well.
func runHost(t *testing.T, files map[string]string, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	p := newProc(t)
	for k, v := range env {
		p.env[k] = v
	}
	for name, content := range files {
		path := filepath.Join(p.cwd, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var environ []string
	for k, v := range p.env {
		environ = append(environ, k+"="+v)
	}
	var out bytes.Buffer
	var errb syncBuffer
	code := app.Main(context.Background(), app.Env{Args: append([]string{"--model", "fake/echo", "--no-session"}, args...),
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return p.env[k] }, Cwd: p.cwd, Environ: func() []string { return environ }})
	return code, out.String(), errb.String()
}

// syncBuffer is stderr shared by ama-rpc's logger and the host child's
// output copier.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func requireNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
}

const okTool = `api.tools.register({name: "canvas_ping", permission: "read", description: "Ping.", parameters: {type: "object", properties: {text: {type: "string"}}}, execute: async (i) => ({content: "pong " + i.text})});`

// TestHostLoadFailures pins the loading-failure table of the host API.
func TestHostLoadFailures(t *testing.T) {
	requireNode(t)
	cases := []struct {
		name  string
		files map[string]string
		env   map[string]string
		host  string
		code  int
		err   string
	}{
		{name: "missing file", host: "nope.cjs", code: app.ExitHost, err: "does not exist"},
		{name: "load throws", files: map[string]string{"a.cjs": `throw new Error("boom at load")`}, host: "a.cjs", code: app.ExitHost, err: "boom at load"},
		{name: "syntax error cjs", files: map[string]string{"a.cjs": `module.exports = {`}, host: "a.cjs", code: app.ExitHost, err: "failed to load"},
		{name: "no hostApi or create", files: map[string]string{"a.cjs": `module.exports = {other: 1}`}, host: "a.cjs", code: app.ExitHost, err: "neither hostApi nor create"},
		{name: "hostApi 2", files: map[string]string{"a.cjs": `module.exports = {hostApi: 2, create() {}}`}, host: "a.cjs", code: app.ExitHostAPI, err: "hostApi 2"},
		{name: "create without hostApi", files: map[string]string{"a.cjs": `module.exports = {create() {}}`}, host: "a.cjs", code: app.ExitHostAPI},
		{name: "create not a function", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create: 3}`}, host: "a.cjs", code: app.ExitHost, err: "not a function"},
		{name: "create throws", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create() { throw new Error("nope from create") }}`}, host: "a.cjs", code: app.ExitHost, err: "nope from create"},
		{name: "create rejects", files: map[string]string{"a.mjs": `export const hostApi = 1; export async function create() { throw new Error("async nope") }`}, host: "a.mjs", code: app.ExitHost, err: "async nope"},
		{name: "create times out", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create: () => new Promise(() => {})}`}, env: map[string]string{"AMA_HOST_CREATE_TIMEOUT_MS": "300"}, host: "a.cjs", code: app.ExitHost, err: "did not settle within 300ms"},
		{name: "empty id", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create: () => ({id: ""})}`}, host: "a.cjs", code: app.ExitHost, err: "non-empty"},
		{name: "non-object result", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create: () => 5}`}, host: "a.cjs", code: app.ExitHost},
		{name: "tool_exists", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create(api) { api.tools.register({name: "bash", permission: "execute", execute() {}}); return {id: "x"} }}`}, host: "a.cjs", code: app.ExitHost, err: "tool bash is already registered"},
		{name: "bad tool name", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create(api) { api.tools.register({name: "Bad Name", permission: "read", execute() {}}); return {id: "x"} }}`}, host: "a.cjs", code: app.ExitHost, err: "invalid tool name"},
		{name: "one-char name", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create(api) { api.tools.register({name: "x", permission: "read", execute() {}}); return {id: "x"} }}`}, host: "a.cjs", code: app.ExitHost, err: "invalid tool name"},
		{name: "memory permission", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create(api) { api.tools.register({name: "canvas_m", permission: "memory", execute() {}}); return {id: "x"} }}`}, host: "a.cjs", code: app.ExitHost, err: "permission"},
		{name: "schema minimum", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create(api) { api.tools.register({name: "canvas_n", permission: "read", parameters: {type: "object", properties: {n: {type: "number", minimum: 1}}}, execute() {}}); return {id: "x"} }}`}, host: "a.cjs", code: app.ExitHost, err: `$.properties.n: unsupported keyword "minimum"`},
		{name: "schema oneOf and $schema", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create(api) { api.tools.register({name: "canvas_n", permission: "read", parameters: {$schema: "x", oneOf: []}, execute() {}}); return {id: "x"} }}`}, host: "a.cjs", code: app.ExitHost, err: `unsupported keyword "$schema"; $: unsupported keyword "oneOf"`},
		{name: "node missing", files: map[string]string{"a.cjs": `module.exports = {hostApi: 1, create: () => ({id: "x"})}`}, env: map[string]string{"AMA_NODE": "/nonexistent/node"}, host: "a.cjs", code: app.ExitHost, err: "AMA_NODE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := runHost(t, c.files, c.env, "", "--host", c.host)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			if c.err != "" && !strings.Contains(stderr, c.err) {
				t.Errorf("stderr lacks %q:\n%s", c.err, stderr)
			}
			if strings.Contains(out, `"hello"`) {
				t.Errorf("hello printed although the host failed: %s", out)
			}
		})
	}
}

// TestHostModuleShapes loads the same adapter as ESM, CJS and .js in both
// forms; create returning undefined is plain ama.
func TestHostModuleShapes(t *testing.T) {
	requireNode(t)
	body := `{ ` + okTool + ` return {id: "shape"} }`
	cases := map[string]map[string]string{
		"esm named":        {"h.mjs": `export const hostApi = 1; export function create(api) ` + body},
		"esm default":      {"h.mjs": `export default {hostApi: 1, create(api) ` + body + `}`},
		"cjs":              {"h.cjs": `module.exports = {hostApi: 1, create(api) ` + body + `}`},
		"cjs default":      {"h.cjs": `module.exports = {default: {hostApi: 1, create(api) ` + body + `}}`},
		"js as cjs":        {"h.js": `exports.hostApi = 1; exports.create = function (api) ` + body},
		"js as esm":        {"h.js": `export default {hostApi: 1, create(api) ` + body + `}`, "package.json": `{"type": "module"}`},
		"js esm uppercase": {"h.JS": `export default {hostApi: 1, create(api) ` + body + `}`, "package.json": `{"type": "module"}`},
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) {
			mod := ""
			for f := range files {
				if f != "package.json" {
					mod = f
				}
			}
			code, out, stderr := runHost(t, files, nil, `{"id":"t","type":"get_state"}`+"\n", "--host", mod, "--tools", "read,canvas_ping")
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if !strings.Contains(out, `"hello"`) {
				t.Fatalf("no hello:\n%s", out)
			}
		})
	}
	t.Run("AMA_NODE names the runtime", func(t *testing.T) {
		node, _ := exec.LookPath("node")
		files := map[string]string{"h.cjs": `module.exports = {hostApi: 1, create(api) ` + body + `}`}
		// The child always gets ELECTRON_RUN_AS_NODE=1 (harmless for node).
		code, out, stderr := runHost(t, files, map[string]string{"AMA_NODE": node}, "", "--host", "h.cjs", "--tools", "canvas_ping")
		if code != 0 || !strings.Contains(out, `"hello"`) {
			t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
		}
	})
	t.Run("create returns undefined", func(t *testing.T) {
		files := map[string]string{"h.cjs": `module.exports = {hostApi: 1, create(api) { return undefined }}`}
		code, out, stderr := runHost(t, files, nil, "", "--host", "h.cjs", "--tools", "canvas_ping")
		// canvas_ping is unknown to plain ama: --tools rejects it, proving no host is active.
		if code == 0 || !strings.Contains(stderr+out, "canvas_ping") {
			t.Fatalf("exit %d, out %s stderr %s", code, out, stderr)
		}
		code, out, stderr = runHost(t, files, nil, "", "--host", "h.cjs")
		if code != 0 || !strings.Contains(out, `"hello"`) {
			t.Fatalf("plain ama did not start: exit %d\n%s\n%s", code, out, stderr)
		}
	})
}

// runProfile runs ama-rpc with a profile whose text is built by mk from a
// scratch directory.
func runProfile(t *testing.T, mk func(dir string) string, env map[string]string, stdin string, args ...string) (int, string, string, string) {
	t.Helper()
	dir := t.TempDir()
	prof := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(prof, []byte(mk(dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newProc(t)
	for k, v := range env {
		p.env[k] = v
	}
	var out bytes.Buffer
	var errb syncBuffer
	code := app.Main(context.Background(), app.Env{Args: append([]string{"--model", "fake/echo", "--profile", prof}, args...),
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return p.env[k] }, Cwd: p.cwd, Environ: func() []string { return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.home} }})
	return code, out.String(), errb.String(), dir
}

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProfileErrors(t *testing.T) {
	cases := []struct {
		name string
		mk   func(dir string) string
		err  string
	}{
		{"not json", func(string) string { return `{` }, "profile"},
		{"no version", func(string) string { return `{}` }, "version must be 1"},
		{"unknown key", func(string) string { return `{"version":1,"hots":"/x"}` }, "unknown field"},
		{"relative sessionDir", func(string) string { return `{"version":1,"sessionDir":"sessions","skillDirs":["skills"]}` }, "paths must be absolute: sessionDir: sessions, skillDirs: skills"},
		{"missing instructions file", func(d string) string { return `{"version":1,"instructions":["` + d + `/nope.md"]}` }, "nope.md is not a file"},
		{"missing config", func(d string) string { return `{"version":1,"config":"` + d + `/config.json"}` }, "config.json is not a file"},
		{"missing hooksFile", func(d string) string { return `{"version":1,"hooksFile":"` + d + `/hooks.json"}` }, "hooks.json is not a file"},
		{"invalid config", func(d string) string {
			write(t, filepath.Join(d, "config.json"), `{"permission":{"mode":5}}`)
			return `{"version":1,"config":"` + d + `/config.json"}`
		}, "config.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr, _ := runProfile(t, c.mk, nil, "")
			if code != app.ExitConfig || !strings.Contains(stderr, c.err) {
				t.Fatalf("exit %d, want 3 with %q; stderr:\n%s", code, c.err, stderr)
			}
		})
	}
	t.Run("missing profile", func(t *testing.T) {
		p := newProc(t)
		code, _, stderr := p.run(t, context.Background(), "", "--model", "fake/echo", "--profile", "nope.json")
		if code != app.ExitConfig || !strings.Contains(stderr, "nope.json") {
			t.Fatalf("exit %d; %s", code, stderr)
		}
	})
}

// The fields Armadra writes: host, instructions (project context after
// AGENTS.md), skillDirs, config (layered over the user config, ama's
// version accepted, tools.default applied) and sessionDir.
func TestProfileApplied(t *testing.T) {
	requireNode(t)
	record := filepath.Join(t.TempDir(), "record.jsonl")
	stdin := `{"id":"p","type":"prompt","message":"hi"}` + "\n" + `{"id":"s","type":"get_state"}` + "\n"
	code, out, stderr, dir := runProfile(t, func(d string) string {
		write(t, filepath.Join(d, "host.cjs"), `module.exports = {hostApi: 1, create(api) { `+okTool+` api.instructions.add({kind: "text", text: "HOST TEXT"}); return {id: "p"} }}`)
		write(t, filepath.Join(d, "instructions.md"), "PROFILE INSTRUCTIONS\n")
		_ = os.MkdirAll(filepath.Join(d, "skills", "canvas-skill"), 0o755)
		write(t, filepath.Join(d, "skills", "canvas-skill", "SKILL.md"), "---\nname: canvas-skill\ndescription: Work on the canvas.\n---\nbody\n")
		write(t, filepath.Join(d, "config.json"), `{"version":1,"permission":{"mode":"auto-edit"},"compaction":{"enabled":true},"tools":{"default":["+task"]}}`)
		return `{"version":1,"host":"` + d + `/host.cjs","instructions":["` + d + `/instructions.md"],"skillDirs":["` + d + `/skills"],"config":"` + d + `/config.json","sessionDir":"` + d + `/sessions"}`
	}, map[string]string{"AMA_FAKE_RECORD": record}, stdin)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, `"permissionMode":"auto-edit"`) {
		t.Errorf("profile config not applied:\n%s", out)
	}
	if !strings.Contains(out, filepath.Join(dir, "sessions")) {
		t.Errorf("profile sessionDir not used:\n%s", out)
	}
	data, _ := os.ReadFile(record)
	req := string(data)
	pc, host := strings.Index(req, "PROFILE INSTRUCTIONS"), strings.Index(req, "HOST TEXT")
	if pc < 0 || host < 0 || pc > host || !strings.Contains(req, `\u003cfile path=`) && !strings.Contains(req, `<file path=`) {
		t.Errorf("instructions placement (project context %d, host %d):\n%s", pc, host, req)
	}
	if !strings.Contains(req, "canvas-skill") || !strings.Contains(req, "canvas_ping") {
		t.Errorf("profile skill or host tool missing from the request:\n%s", req)
	}
	// tools.default ["+task"] adds task (and task_ctl) to the defaults and
	// the host tools, as in ama.
	for _, name := range []string{`"task"`, `"task_ctl"`, `"canvas_ping"`, `"bash"`} {
		if !strings.Contains(req[strings.Index(req, `"tools":[`):], name) {
			t.Errorf("the request's tools lack %s:\n%s", name, req)
		}
	}
}

// --host-cmd runs a program that speaks docs/host-protocol.md itself (the
// doc's minimal host, kept in test/fixtures/host).
func TestHostCmd(t *testing.T) {
	requireNode(t)
	prog, err := filepath.Abs("../test/fixtures/host/protocol-host.cjs")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.json")
	write(t, script, `{"version":1,"responses":[{"steps":[{"toolCall":{"name":"host_echo","arguments":{"text":"over the pipe"}}}]},{"text":"Done."}]}`)
	code, out, stderr := runHost(t, nil, map[string]string{"AMA_FAKE_SCRIPT": script}, `{"id":"p","type":"prompt","message":"go"}`+"\n",
		"--host-cmd", "node "+prog)
	if code != 0 || !strings.Contains(out, `"text":"echo: over the pipe"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.cjs")
	data, _ := os.ReadFile(prog)
	write(t, bad, strings.Replace(string(data), `name: "host_echo"`, `name: "bash"`, 1))
	if code, _, stderr := runHost(t, nil, nil, "", "--host-cmd", "node "+bad); code != app.ExitHost || !strings.Contains(stderr, "tool_exists") {
		t.Fatalf("a built-in name over the protocol: exit %d\n%s", code, stderr)
	}
}

// ui.notify during create() comes before the server serves: it is queued
// and written after hello and session_start (with its stderr copy), not
// lost.
func TestHostNotifyDuringCreate(t *testing.T) {
	requireNode(t)
	files := map[string]string{"h.cjs": `module.exports = {hostApi: 1, create(api) { api.ui.notify("early bird", "warn"); api.ui.notify("plain"); return {id: "n"} }}`}
	code, out, stderr := runHost(t, files, nil, "", "--host", "h.cjs")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "ama: [warn] early bird\n") || !strings.Contains(stderr, "ama: [info] plain\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
	want := `{"type":"notification","level":"warn","message":"early bird"}` + "\n" + `{"type":"notification","level":"info","message":"plain"}` + "\n"
	if i, j := strings.Index(out, `"type":"session_start"`), strings.Index(out, want); i < 0 || j < i {
		t.Errorf("the notifications of create() are not written after hello and session_start:\n%s", out)
	}
}

// A startup that fails after create() (here: --tools names an unknown
// tool) disposes the adapter without session_shutdown.
func TestHostDisposedOnFailedStartup(t *testing.T) {
	requireNode(t)
	trace := filepath.Join(t.TempDir(), "trace")
	files := map[string]string{"h.cjs": `const fs = require("fs");
module.exports = {hostApi: 1, create(api) {
  api.events.on("session_shutdown", () => fs.appendFileSync(api.env.TRACE, "shutdown\n"));
  return {id: "d", dispose() { fs.appendFileSync(api.env.TRACE, "dispose\n") }};
}};`}
	code, _, stderr := runHost(t, files, map[string]string{"TRACE": trace}, "", "--host", "h.cjs", "--tools", "nope")
	if code == 0 {
		t.Fatalf("started with an unknown tool:\n%s", stderr)
	}
	if data, _ := os.ReadFile(trace); string(data) != "dispose\n" {
		t.Errorf("trace %q, want dispose only", data)
	}
}

// A tool the adapter disabled stays off even when tools.default or
// --tools name it (task and task_ctl are then not registered at all).
func TestHostDisabledToolStaysOff(t *testing.T) {
	requireNode(t)
	record := filepath.Join(t.TempDir(), "record.jsonl")
	files := map[string]string{"h.cjs": `module.exports = {hostApi: 1, create(api) { api.tools.disable("task"); api.tools.disable("bash"); return {id: "d"} }}`}
	code, _, stderr := runHost(t, files, map[string]string{"AMA_FAKE_RECORD": record}, `{"id":"p","type":"prompt","message":"hi"}`+"\n",
		"--host", "h.cjs", "--tools", "+task,+bash")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	data, _ := os.ReadFile(record)
	tools := string(data)[strings.Index(string(data), `"tools":[`):]
	tools = tools[:strings.Index(tools, "]")]
	if strings.Contains(tools, `"task"`) || strings.Contains(tools, `"bash"`) || !strings.Contains(tools, `"read"`) {
		t.Errorf("tools %s: want read, no task, no bash", tools)
	}
}

// --resume with the start of an id: the host adapter, started before the
// session opens, is told the session's whole id in create(), not the
// prefix given.
func TestHostResumePrefixSessionID(t *testing.T) {
	requireNode(t)
	p := newProc(t)
	code, lines, stderr := p.run(t, t.Context(), `{"id":"1","type":"prompt","message":"hi"}`+"\n", "--model", "fake/echo")
	if code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	id, _ := lines[1]["sessionId"].(string)
	trace := filepath.Join(t.TempDir(), "trace")
	p.env["TRACE"] = trace
	write(t, filepath.Join(p.cwd, "h.cjs"), `const fs = require("fs");
module.exports = {hostApi: 1, create(api) { fs.writeFileSync(api.env.TRACE, String(api.session.id())); return {id: "r"} }};`)
	var environ []string
	for k, v := range p.env {
		environ = append(environ, k+"="+v)
	}
	var out bytes.Buffer
	var errb syncBuffer
	code = app.Main(t.Context(), app.Env{Args: []string{"--model", "fake/echo", "--host", "h.cjs", "--resume", id[:8]},
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return p.env[k] }, Cwd: p.cwd, Environ: func() []string { return environ }})
	if code != 0 {
		t.Fatalf("--resume %s with a host: exit %d\n%s", id[:8], code, errb.String())
	}
	if data, _ := os.ReadFile(trace); string(data) != id {
		t.Errorf("create() saw session id %q, want %q", data, id)
	}
}

// seenAdapter records what api.session.id() and file() give in create()
// and what the startup session_start names, as one JSON line each.
const seenAdapter = `const fs = require("fs");
const rec = (o) => fs.appendFileSync(process.env.TRACE, JSON.stringify(o) + "\n");
module.exports = {hostApi: 1, create(api) {
  rec({at: "create", id: api.session.id() || "", file: api.session.file() || ""});
  api.events.on("session_start", (e) => rec({at: "start", id: e.sessionId, file: e.sessionFile || "", reason: e.reason}));
  return {id: "seen"};
}};`

type seenSession struct{ At, ID, File, Reason string }

// hostSees runs ama-rpc (rpc mode, or -p when args say so) in p with
// seenAdapter and returns what create() and session_start saw.
func hostSees(t *testing.T, p *proc, stdin string, args ...string) (create, start seenSession) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "trace")
	write(t, filepath.Join(p.cwd, "seen.cjs"), seenAdapter)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.home, "TRACE=" + trace}
	var out bytes.Buffer
	var errb syncBuffer
	code := app.Main(t.Context(), app.Env{Args: append([]string{"--model", "fake/echo", "--host", "seen.cjs"}, args...),
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return p.env[k] }, Cwd: p.cwd, Environ: func() []string { return env }})
	if code != 0 {
		t.Fatalf("%v with a host: exit %d\n%s", args, code, errb.String())
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var s seenSession
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("trace line %q: %v", l, err)
		}
		switch s.At {
		case "create":
			create = s
		case "start":
			if start.At == "" {
				start = s
			}
		}
	}
	if start.ID == "" {
		t.Fatalf("no session_start reached the adapter: %s", data)
	}
	return create, start
}

// With a host, create() sees the startup session as ama shows it (ama
// opens the session, forks included, before the adapter): under
// --continue and --session the id and file of the session opened, under
// --fork the id of the copy (its file is written when the fork is made,
// after create()). In rpc and acp mode and in -p (--fork is refused with
// --mode acp).
func TestHostCreateSeesStartupSession(t *testing.T) {
	requireNode(t)
	p := newProc(t)
	code, lines, stderr := p.run(t, t.Context(), `{"id":"1","type":"prompt","message":"hi"}`+"\n"+`{"id":"s","type":"get_state"}`+"\n", "--model", "fake/echo")
	if code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	var id, file string
	for _, l := range lines {
		if data, ok := l["data"].(map[string]any); ok && l["id"] == "s" {
			id, _ = data["sessionId"].(string)
			file, _ = data["sessionFile"].(string)
		}
	}
	if id == "" || file == "" {
		t.Fatalf("no session id or file in get_state: %v", lines)
	}
	rel, err := filepath.Rel(p.cwd, file)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		fork  bool
	}{
		{name: "continue", args: []string{"--continue"}},
		{name: "session path", args: []string{"--session", file}},
		{name: "session relative path", args: []string{"--session", rel}},
		{name: "session-id of a session", args: []string{"--session-id", id}},
		{name: "print continue", args: []string{"-p", "-c", "again"}},
		{name: "acp continue", args: []string{"--mode", "acp", "--continue"}},
		{name: "acp session path", args: []string{"--mode", "acp", "--session", file}},
		// the forks last: a fork is the latest session of the directory
		{name: "fork", args: []string{"--fork", id[:8]}, fork: true},
		{name: "print fork", args: []string{"-p", "--fork", id, "again"}, fork: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			create, start := hostSees(t, p, c.stdin, c.args...)
			if create.ID != start.ID {
				t.Errorf("create() saw session id %q, session_start names %q", create.ID, start.ID)
			}
			if c.fork {
				if start.ID == id || start.Reason != "fork" {
					t.Errorf("session_start %+v: want the fork of %s", start, id)
				}
				if create.File != "" {
					t.Errorf("create() saw file %q before the fork was made", create.File)
				}
				return
			}
			if start.ID != id || create.File != file {
				t.Errorf("create() saw %+v, session_start %+v; want id %s, file %s", create, start, id, file)
			}
		})
	}
}

// A startup session that is not there fails the start before the adapter
// is created, as in ama (the session opens before the host): exit 5 and
// create() never runs.
func TestHostNotCreatedWithoutStartupSession(t *testing.T) {
	requireNode(t)
	for _, args := range [][]string{{"--continue"}, {"--fork", "abcdef"}, {"--resume", "abcdef"}, {"--session", "nope.jsonl"}} {
		t.Run(args[0], func(t *testing.T) {
			p := newProc(t)
			trace := filepath.Join(t.TempDir(), "trace")
			write(t, filepath.Join(p.cwd, "seen.cjs"), seenAdapter)
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.home, "TRACE=" + trace}
			var out bytes.Buffer
			var errb syncBuffer
			code := app.Main(t.Context(), app.Env{Args: append([]string{"--model", "fake/echo", "--host", "seen.cjs"}, args...),
				Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
				Getenv: func(k string) string { return p.env[k] }, Cwd: p.cwd, Environ: func() []string { return env }})
			if code != app.ExitSession {
				t.Fatalf("exit %d, want %d\n%s", code, app.ExitSession, errb.String())
			}
			if data, err := os.ReadFile(trace); err == nil {
				t.Errorf("create() ran although the startup session is not there: %s", data)
			}
		})
	}
}

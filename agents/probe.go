package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/armadra/ama-rpc/internal/childenv"
	"github.com/armadra/ama-rpc/internal/ownfs"
)

// This file finds external agent programs and their versions for
// get_agents (agents.md §8.6): a PATH lookup without a shell, then the
// first x.y.z of `<program> --version` (5 s at most, no network access of
// ours; the program is one of the driver table's). Results are memoised
// per process and kept in <dataDir>/drivers.json, keyed by path and
// invalidated by the file's mtime, so a later process starts no program
// whose binary did not change.

// versionTimeout bounds one `--version` run.
const versionTimeout = 5 * time.Second

// Located is a found program.
type Located struct {
	Path    string
	Version string // "" when the output held no x.y.z
}

// Prober locates programs. Safe for concurrent use; one lookup per program
// per process.
type Prober struct {
	// LookPath finds a program (nil: exec.LookPath, which starts no shell).
	LookPath func(string) (string, error)
	// Run runs `<path> args` and returns its output (nil: a direct exec
	// bounded by Timeout, output capped).
	Run func(ctx context.Context, path string, args ...string) ([]byte, error)
	// CacheFile is <dataDir>/drivers.json ("": memory only).
	CacheFile string
	// Timeout bounds one version run (0: 5 s).
	Timeout time.Duration

	mu   sync.Mutex
	memo map[string]*probeCall
	file sync.Mutex // serialises drivers.json reads and writes
}

type probeCall struct {
	done chan struct{}
	loc  *Located
}

// Locate finds program and its version; nil when it is not installed.
func (p *Prober) Locate(program string) *Located {
	p.mu.Lock()
	if p.memo == nil {
		p.memo = map[string]*probeCall{}
	}
	c := p.memo[program]
	if c != nil {
		p.mu.Unlock()
		<-c.done
		return c.loc
	}
	c = &probeCall{done: make(chan struct{})}
	p.memo[program] = c
	p.mu.Unlock()
	c.loc = p.locate(program)
	close(c.done)
	return c.loc
}

// Installed reports whether program is on PATH (no process is started).
func (p *Prober) Installed(program string) bool {
	_, err := p.lookPath(program)
	return err == nil
}

func (p *Prober) lookPath(program string) (string, error) {
	if p.LookPath != nil {
		return p.LookPath(program)
	}
	return childenv.LookPath(program)
}

func (p *Prober) locate(program string) *Located {
	path, err := p.lookPath(program)
	if err != nil {
		return nil
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	var mtime int64
	if st, err := os.Stat(path); err == nil {
		mtime = st.ModTime().UnixMilli()
	}
	if e, ok := p.cached(path); ok && e.MtimeMs == mtime {
		return &Located{Path: path, Version: e.Version}
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = versionTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	run := p.Run
	if run == nil {
		run = runVersion
	}
	out, _ := run(ctx, path, "--version") // a failing run may still print its version
	v := ParseVersion(string(out))
	p.store(path, cacheEntry{MtimeMs: mtime, Version: v})
	return &Located{Path: path, Version: v}
}

// runVersion runs the program directly (no shell) with a bounded output;
// the context's end kills it, and WaitDelay stops waiting for children
// that keep its output open.
func runVersion(ctx context.Context, path string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = childenv.Environ(childenv.Policy{ModelClient: true})
	var out capped
	out.max = 64 << 10
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	return out.b.Bytes(), err
}

type capped struct {
	mu  sync.Mutex
	b   bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?`)

// ParseVersion returns the first x.y.z (with an optional pre-release) of
// text, or "".
func ParseVersion(text string) string { return versionRE.FindString(text) }

// VersionIn reports whether version satisfies a range of space-separated
// >=, <=, >, <, = x.y.z parts (all must hold; unparsable parts are
// ignored).
func VersionIn(version, rng string) bool {
	for _, part := range strings.Fields(rng) {
		op := part[:len(part)-len(strings.TrimLeft(part, "<>="))]
		want := strings.TrimLeft(part, "<>=")
		if ParseVersion(want) != want {
			continue
		}
		c := compareVersions(version, want)
		ok := false
		switch op {
		case ">=":
			ok = c >= 0
		case "<=":
			ok = c <= 0
		case ">":
			ok = c > 0
		case "<":
			ok = c < 0
		case "", "=":
			ok = c == 0
		default:
			continue
		}
		if !ok {
			return false
		}
	}
	return true
}

func compareVersions(a, b string) int {
	pa := strings.Split(strings.SplitN(a, "-", 2)[0], ".")
	pb := strings.Split(strings.SplitN(b, "-", 2)[0], ".")
	for i := 0; i < 3; i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// cacheEntry is one program of drivers.json.
type cacheEntry struct {
	MtimeMs int64  `json:"mtimeMs"`
	Version string `json:"version,omitempty"`
}

type cacheFile struct {
	Version  int                   `json:"version"`
	Programs map[string]cacheEntry `json:"programs"`
}

func (p *Prober) readCache() map[string]cacheEntry {
	if p.CacheFile == "" {
		return nil
	}
	data, err := ownfs.ReadUser(p.CacheFile, ownfs.MaxConfig)
	if err != nil {
		return nil
	}
	var f cacheFile
	if json.Unmarshal(data, &f) != nil || f.Version != 1 {
		return nil
	}
	return f.Programs
}

func (p *Prober) cached(path string) (cacheEntry, bool) {
	p.file.Lock()
	defer p.file.Unlock()
	e, ok := p.readCache()[path]
	return e, ok
}

// store records a probe; a cache that cannot be written only costs a
// later process one more version run.
func (p *Prober) store(path string, e cacheEntry) {
	if p.CacheFile == "" {
		return
	}
	p.file.Lock()
	defer p.file.Unlock()
	progs := p.readCache()
	if progs == nil {
		progs = map[string]cacheEntry{}
	}
	progs[path] = e
	data, err := json.MarshalIndent(cacheFile{Version: 1, Programs: progs}, "", "  ")
	if err != nil {
		return
	}
	_ = ownfs.WriteAtomic(filepath.Dir(p.CacheFile), filepath.Base(p.CacheFile), append(data, '\n'))
}

// ExternalInfos is the external part of get_agents: every agent of the
// driver table with installed and version (the first installed candidate
// decides); the table's ama is listed as acp:ama.
func (p *Prober) ExternalInfos() []AgentInfo {
	out := make([]AgentInfo, 0, len(driverTable))
	for _, e := range driverTable {
		info := AgentInfo{Name: e.id, Description: e.label, Runner: e.id, Source: SourceBuiltin, Installed: new(bool)}
		if e.id == "ama" {
			info.Name, info.Runner = "acp:ama", "acp:ama"
		}
		for _, c := range e.candidates {
			if loc := p.Locate(c.program); loc != nil {
				*info.Installed, info.Version = true, loc.Version
				break
			}
		}
		out = append(out, info)
	}
	return out
}

// ListedExternals are the catalog entries of claude and codex when one of
// their programs is on PATH (no process started): they are described in
// the task tool (agents.md §8.1).
func (p *Prober) ListedExternals() []*Type {
	var out []*Type
	for _, id := range []string{AgentClaude, AgentCodex} {
		for _, c := range driverFor(id).candidates {
			if p.Installed(c.program) {
				out = append(out, externalType(id))
				break
			}
		}
	}
	return out
}

// LookPathIn is exec.LookPath over the given PATH value (the process
// environment a host hands ama-rpc may differ from os.Getenv's), skipping
// relative entries and those inside untrusted (childenv.LookPathIn: the
// probe runs what it finds with --version, outside the sandbox).
func LookPathIn(pathList string, untrusted ...string) func(string) (string, error) {
	return func(program string) (string, error) {
		return childenv.LookPathIn(pathList, program, untrusted...)
	}
}

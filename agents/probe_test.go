package agents

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBin writes an executable script into dir.
func fakeBin(t *testing.T, dir, name, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func runs(t *testing.T, counter string) int {
	data, _ := os.ReadFile(counter)
	return strings.Count(string(data), "x")
}

func TestProbeVersionCachedByMtime(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	counter := filepath.Join(dir, "runs")
	claude := fakeBin(t, bin, "claude", `echo x >> '`+counter+`'; echo "2.1.5 (Claude Code)"`)
	cache := filepath.Join(dir, "data", "drivers.json")
	newProber := func() *Prober { return &Prober{LookPath: LookPathIn(bin), CacheFile: cache} }

	p := newProber()
	infos := p.ExternalInfos()
	byName := map[string]AgentInfo{}
	for _, in := range infos {
		byName[in.Name] = in
	}
	if c := byName["claude"]; c.Installed == nil || !*c.Installed || c.Version != "2.1.5" || c.Description != "Claude Code" {
		t.Fatalf("claude %+v", c)
	}
	if c := byName["codex"]; c.Installed == nil || *c.Installed || c.Version != "" {
		t.Fatalf("codex %+v", c)
	}
	if _, ok := byName["acp:ama"]; !ok || byName["ama"].Name != "" {
		t.Fatal("the table's ama is not listed as acp:ama")
	}
	p.ExternalInfos() // memoised in the process
	if n := runs(t, counter); n != 1 {
		t.Fatalf("--version ran %d times in one process", n)
	}
	// A new process reads drivers.json: the unchanged binary is not run.
	newProber().Locate("claude")
	if n := runs(t, counter); n != 1 {
		t.Fatalf("--version ran %d times with a valid cache", n)
	}
	data, _ := os.ReadFile(cache)
	if !strings.Contains(string(data), `"version": 1`) || !strings.Contains(string(data), claude) {
		t.Fatalf("drivers.json %s", data)
	}
	// A changed binary (mtime) is probed again.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(claude, later, later); err != nil {
		t.Fatal(err)
	}
	if loc := newProber().Locate("claude"); loc == nil || loc.Version != "2.1.5" {
		t.Fatalf("located %+v", loc)
	}
	if n := runs(t, counter); n != 2 {
		t.Fatalf("--version ran %d times after the binary changed", n)
	}
}

// A program that never answers is cut off at the timeout: installed, no
// version.
func TestProbeTimeoutBounded(t *testing.T) {
	dir := t.TempDir()
	fakeBin(t, dir, "gemini", "sleep 30")
	p := &Prober{LookPath: LookPathIn(dir), Timeout: 200 * time.Millisecond}
	start := time.Now()
	loc := p.Locate("gemini")
	if loc == nil || loc.Version != "" {
		t.Fatalf("located %+v", loc)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("probe took %v", d)
	}
	if p.Locate("nope-not-here") != nil {
		t.Fatal("a missing program was located")
	}
}

func TestVersionParsing(t *testing.T) {
	if v := ParseVersion("codex-cli 0.165.2-alpha.1\n"); v != "0.165.2-alpha.1" {
		t.Fatal(v)
	}
	if v := ParseVersion("no version"); v != "" {
		t.Fatal(v)
	}
	for _, c := range []struct {
		v, rng string
		ok     bool
	}{{"2.1.5", ">=2.1.0 <3.0.0", true}, {"3.0.0", ">=2.1.0 <3.0.0", false}, {"2.0.9", ">=2.1.0 <3.0.0", false},
		{"0.170.0-beta", ">=0.160.0 <0.200.0", true}, {"1.2.3", "=1.2.3", true}, {"1.2.3", "1.2.4", false}} {
		if VersionIn(c.v, c.rng) != c.ok {
			t.Errorf("%s in %s", c.v, c.rng)
		}
	}
}

// get_agents lists the probed externals after the catalog once the probe
// is done; with a host adapter none are probed.
func TestAgentsIncludeProbe(t *testing.T) {
	r := newRig(t, "full-auto")
	bin := filepath.Join(r.dir, "bin")
	fakeBin(t, bin, "codex", `echo "codex-cli 0.165.0"`)
	r.reg.cfg.Probe = &Prober{LookPath: LookPathIn(bin)}
	reg := newRegistry(r.reg.cfg, r.parent)
	<-reg.probed
	got := reg.Agents()
	if got[0].Name != "general" || got[1].Name != "explore" || got[2].Name != "plan" {
		t.Fatalf("order %v", got[:3])
	}
	var codex *AgentInfo
	for i := range got {
		if got[i].Name == "codex" {
			codex = &got[i]
		}
	}
	if codex == nil || codex.Installed == nil || !*codex.Installed || codex.Version != "0.165.0" || codex.Source != SourceBuiltin {
		t.Fatalf("codex %+v", codex)
	}
	cfg := r.reg.cfg
	cfg.HostRunners = fakeHost{}
	if h := newRegistry(cfg, r.parent); h.probed != nil {
		t.Fatal("a hosted registry probes external agents")
	}
}

type fakeHost struct{}

func (fakeHost) HostRunners() []HostRunnerInfo { return nil }
func (fakeHost) RunTask(context.Context, string, HostRunRequest, func(HostRunEvent)) (HostRunResult, error) {
	return HostRunResult{}, nil
}

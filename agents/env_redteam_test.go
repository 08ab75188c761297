package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An external agent's process never sees this process's provider keys:
// the built-in *_API_KEY names and the user's apiKeyEnv names (which
// need not end in _API_KEY) are stripped; only agents.<id>.env.passthrough
// re-adds one. The agent program writes the environment it got.
func TestExternalAgentEnvHasNoProviderKeys(t *testing.T) {
	r := newRig(t, "full-auto")
	bin := filepath.Join(r.dir, "bin")
	dump := filepath.Join(r.dir, "env.txt")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "envdump-agent"), []byte("#!/bin/sh\nenv > '"+dump+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("MY_LLM_TOKEN", "secret-custom")
	t.Setenv("OPENAI_API_KEY", "secret-openai")
	t.Setenv("GROQ_API_KEY", "secret-groq")
	t.Setenv("KEEP_ME", "plain")
	r.reg.cfg.Trusted = true
	r.reg.cfg.Deps.Settings.ToolEnv.Hide = []string{"MY_LLM_TOKEN"}
	r.reg.cfg.External = map[string]ExternalSettings{"acp:envdump-agent": {Passthrough: []string{"GROQ_API_KEY"}}}
	runTask(t, r, "acp:envdump-agent")
	data, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the agent did not start: %v", err)
	}
	env := string(data)
	for _, leak := range []string{"secret-custom", "secret-openai"} {
		if strings.Contains(env, leak) {
			t.Errorf("the external agent saw %s", leak)
		}
	}
	if !strings.Contains(env, "KEEP_ME=plain") || !strings.Contains(env, "GROQ_API_KEY=secret-groq") {
		t.Errorf("plain or passed-through variables missing:\n%s", env)
	}
}

package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/app"
)

// keysOf runs get_available_models under a profile and returns the key
// source of each provider ("" for no key).
func keysOf(t *testing.T, profileExtra, auth string, env map[string]string) (map[string]string, string) {
	t.Helper()
	code, out, stderr, _ := runProfile(t, func(d string) string {
		write(t, filepath.Join(d, "auth.json"), auth)
		return `{"version":1,"authFile":"` + d + `/auth.json"` + profileExtra + `}`
	}, env, `{"id":"m","type":"get_available_models"}`+"\n")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	keys := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		var m struct {
			ID   string
			Data struct {
				Models []struct {
					Provider  string
					HasKey    bool
					KeySource string
				}
			}
		}
		if json.Unmarshal([]byte(l), &m) != nil || m.ID != "m" {
			continue
		}
		for _, x := range m.Data.Models {
			if x.HasKey {
				keys[x.Provider] = x.KeySource
			} else {
				keys[x.Provider] = ""
			}
		}
	}
	return keys, stderr
}

const authJSON = `{"version":1,"providers":{"openai":{"apiKey":"sk-file"},"deepseek":{"apiKey":"$DS_KEY"},"groq":{"apiKey":"!pass show groq"},"nowhere":{"apiKey":"x"}}}`

// A profile's authFile supplies keys (literal, or a $VAR reference) to the
// known providers; a key given by a command is refused with a warning;
// the environment still supplies keys the file lacks.
func TestProfileAuthFile(t *testing.T) {
	keys, stderr := keysOf(t, "", authJSON, map[string]string{"DS_KEY": "ds"})
	if keys["openai"] != "config" || keys["deepseek"] != "config" {
		t.Errorf("auth file keys: %v", keys)
	}
	if !strings.Contains(stderr, "provider groq: a key given by a command is not supported") {
		t.Errorf("no warning for the command key:\n%s", stderr)
	}
	keys, _ = keysOf(t, "", `{"version":1,"providers":{"openai":{"apiKey":"sk-file"}}}`, map[string]string{"DEEPSEEK_API_KEY": "ds"})
	if keys["openai"] != "config" || keys["deepseek"] != "env" {
		t.Errorf("env key with authEnv default true: %v", keys)
	}
}

// authEnv false: no key comes from the environment, not even through a
// $VAR reference in the auth file.
func TestProfileAuthEnvOff(t *testing.T) {
	keys, _ := keysOf(t, `,"authEnv":false`, authJSON, map[string]string{"DS_KEY": "ds", "DEEPSEEK_API_KEY": "ds"})
	if keys["openai"] != "config" || keys["deepseek"] != "" {
		t.Errorf("authEnv false, $VAR key: %v", keys)
	}
	keys, _ = keysOf(t, `,"authEnv":false`, `{"version":1,"providers":{}}`, map[string]string{"DEEPSEEK_API_KEY": "ds", "AMA_API_KEY_OPENAI": "o"})
	if keys["openai"] != "" || keys["deepseek"] != "" {
		t.Errorf("authEnv false, env keys: %v", keys)
	}
}

func TestProfileAuthFileInvalid(t *testing.T) {
	code, _, stderr, _ := runProfile(t, func(d string) string {
		write(t, filepath.Join(d, "auth.json"), `{"providers":`)
		return `{"version":1,"authFile":"` + d + `/auth.json"}`
	}, nil, "")
	if code != app.ExitConfig || !strings.Contains(stderr, "auth file") {
		t.Fatalf("exit %d, want 3:\n%s", code, stderr)
	}
}

// A profile's agentDirs are sub-agent definition directories after the
// --agent-dir ones: listed by get_agents with source "profile"; a
// --agent-dir definition of the same name wins.
func TestProfileAgentDirs(t *testing.T) {
	cli := t.TempDir()
	write(t, filepath.Join(cli, "reviewer.md"), "---\ndescription: cli reviewer\n---\nReview.\n")
	code, out, stderr, _ := runProfile(t, func(d string) string {
		write(t, filepath.Join(d, "painter.md"), "---\ndescription: Paints the canvas.\n---\nPaint.\n")
		write(t, filepath.Join(d, "reviewer.md"), "---\ndescription: profile reviewer\n---\nReview.\n")
		return `{"version":1,"agentDirs":["` + d + `"]}`
	}, nil, `{"id":"ag","type":"get_agents"}`+"\n", "--tools", "read,task", "--agent-dir", cli)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{`"name":"painter","description":"Paints the canvas."`, `"source":"profile"`, `"description":"cli reviewer"`} {
		if !strings.Contains(out, want) {
			t.Errorf("get_agents lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "profile reviewer") {
		t.Errorf("the profile's reviewer replaced the --agent-dir one:\n%s", out)
	}
}

// The profile's promptDirs are template directories, before the user's
// own: a template there is listed by get_commands.
func TestProfilePromptDirs(t *testing.T) {
	code, out, stderr, _ := runProfile(t, func(d string) string {
		prompts := filepath.Join(d, "prompts")
		if err := os.MkdirAll(prompts, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(prompts, "ship.md"), "---\ndescription: profile ship\n---\nShip to $1\n")
		return `{"version":1,"promptDirs":["` + prompts + `"]}`
	}, nil, `{"id":"c","type":"get_commands"}`+"\n")
	if code != 0 || !strings.Contains(out, `{"name":"ship","description":"profile ship","source":"template"}`) {
		t.Fatalf("exit %d:\n%s\n%s", code, out, stderr)
	}
}

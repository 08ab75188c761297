package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/llm/openai"
)

// This file gives a profile's authFile and authEnv their effect on API
// keys (host-api.md §8). ama-rpc has no `auth` command and no auth file of
// its own: keys come from --api-key, a provider's config apiKey, then the
// environment. A profile may name ama's auth.json
// ({"version":1,"providers":{"<id>":{"apiKey":"…"}}}); its keys apply to
// the known providers (presets and configured ones) that have no config
// apiKey. authEnv:false stops keys being read from the environment.

// authKeys reads an auth file: a literal apiKey, or "$VAR" / "${VAR}"
// naming an environment variable (resolved only while keys may come from
// the environment). "!command" keys are not run (a warning): ama-rpc
// never runs a command to find a key. A missing file has no keys; an
// unreadable or invalid one is a config error (exit 3).
func authKeys(path string, getenv func(string) string, useEnv bool) (map[string]string, []string, error) {
	data, err := ownfs.ReadUser(path, ownfs.MaxConfig)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: auth file %s: %v", config.ErrInvalid, path, err)
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: auth file %s: %v", config.ErrInvalid, path, err)
	}
	var f struct {
		Version   int                        `json:"version"`
		Providers map[string]json.RawMessage `json:"providers"`
	}
	if err := json.NewDecoder(bytes.NewReader(std)).Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("%w: auth file %s: %v", config.ErrInvalid, path, err)
	}
	keys := map[string]string{}
	var warnings []string
	for id, raw := range f.Providers {
		var e struct {
			APIKey string `json:"apiKey"`
		}
		if json.Unmarshal(raw, &e) != nil || e.APIKey == "" {
			continue // OAuth entries and the like: not supported here
		}
		v := e.APIKey
		switch {
		case strings.HasPrefix(v, "!"):
			warnings = append(warnings, "auth file "+path+": provider "+id+": a key given by a command is not supported; ignored")
			continue
		case strings.HasPrefix(v, "$"):
			if !useEnv {
				continue
			}
			v = strings.TrimSpace(getenv(strings.Trim(v[1:], "{}")))
		}
		if v != "" {
			keys[id] = v
		}
	}
	return keys, warnings, nil
}

// applyAuthKeys puts the auth file's keys into the config of the known
// providers that have no apiKey of their own.
func applyAuthKeys(cfg map[string]openai.ProviderConfig, keys map[string]string) {
	known := map[string]bool{}
	for _, ps := range openai.Presets() {
		known[ps.ID] = true
	}
	for id, key := range keys {
		pc, configured := cfg[id]
		if (!known[id] && !configured) || pc.APIKey != "" {
			continue
		}
		pc.APIKey = key
		cfg[id] = pc
	}
}

// withoutKeyEnv hides the environment variables that carry API keys
// (AMA_API_KEY_<ID>, a preset's conventional variable, a config's
// apiKeyEnv) from provider assembly: authEnv false.
func withoutKeyEnv(getenv func(string) string, cfg map[string]openai.ProviderConfig) func(string) string {
	hidden := map[string]bool{}
	for _, ps := range openai.Presets() {
		hidden[openai.EnvKeyVar(ps.ID)] = true
		if ps.KeyEnv != "" {
			hidden[ps.KeyEnv] = true
		}
	}
	for id, pc := range cfg {
		hidden[openai.EnvKeyVar(id)] = true
		if pc.APIKeyEnv != "" {
			hidden[pc.APIKeyEnv] = true
		}
	}
	return func(k string) string {
		if hidden[k] || strings.HasPrefix(k, "AMA_API_KEY_") {
			return ""
		}
		return getenv(k)
	}
}

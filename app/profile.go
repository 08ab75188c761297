package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/ownfs"
)

// Profile is a --profile file: what an embedding host (the canvas)
// configures in one place. Every path must be absolute.
type Profile struct {
	Version      int      `json:"version"`
	Host         string   `json:"host,omitempty"`
	Instructions []string `json:"instructions,omitempty"`
	SkillDirs    []string `json:"skillDirs,omitempty"`
	PromptDirs   []string `json:"promptDirs,omitempty"`
	AgentDirs    []string `json:"agentDirs,omitempty"`
	// HooksFile is the profile layer of hooks (between user and project);
	// read by the hooks configuration.
	HooksFile  string `json:"hooksFile,omitempty"`
	AuthFile   string `json:"authFile,omitempty"`
	AuthEnv    *bool  `json:"authEnv,omitempty"`
	SessionDir string `json:"sessionDir,omitempty"`
	// Config is a config.json merged as the profile layer: defaults ← user
	// ← profile ← project (restricted) ← CLI.
	Config       string `json:"config,omitempty"`
	TrustProject *bool  `json:"trustProject,omitempty"`
	// Language is the interface language the embedding host shows (zh
	// or en; above ui.language, below --lang and AMA_LANG).
	Language string `json:"language,omitempty"`
}

// loadProfile reads and checks a profile (errors wrap config.ErrInvalid:
// exit 3). path resolves against the process cwd.
func loadProfile(path, cwd string) (*Profile, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	data, err := ownfs.ReadUser(path, ownfs.MaxConfig)
	if err != nil {
		return nil, fmt.Errorf("%w: profile %s: %v", config.ErrInvalid, path, err)
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, fmt.Errorf("%w: profile %s: %v", config.ErrInvalid, path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: profile %s: %v", config.ErrInvalid, path, err)
	}
	if p.Version != 1 {
		return nil, fmt.Errorf("%w: profile %s: version must be 1", config.ErrInvalid, path)
	}
	if _, ok := i18n.ParseExact(p.Language); p.Language != "" && !ok {
		return nil, fmt.Errorf("%w: profile %s: language must be zh or en, not %q", config.ErrInvalid, path, p.Language)
	}
	var rel []string
	check := func(key, v string) {
		if v != "" && !filepath.IsAbs(v) {
			rel = append(rel, key+": "+v)
		}
	}
	check("host", p.Host)
	check("hooksFile", p.HooksFile)
	check("authFile", p.AuthFile)
	check("sessionDir", p.SessionDir)
	check("config", p.Config)
	for key, list := range map[string][]string{"instructions": p.Instructions, "skillDirs": p.SkillDirs, "promptDirs": p.PromptDirs, "agentDirs": p.AgentDirs} {
		for _, v := range list {
			check(key, v)
		}
	}
	if len(rel) > 0 {
		sort.Strings(rel)
		return nil, fmt.Errorf("%w: profile %s: paths must be absolute: %s", config.ErrInvalid, path, strings.Join(rel, ", "))
	}
	for _, f := range append(append([]string(nil), p.Instructions...), nonEmpty(p.HooksFile, p.Config)...) {
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			return nil, fmt.Errorf("%w: profile %s: %s is not a file", config.ErrInvalid, path, f)
		}
	}
	return &p, nil
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// loadUserConfig is the user config with the profile's config layered on
// top (objects merge key by key, other values replace).
func loadUserConfig(userFile string, p *Profile) (*config.Config, error) {
	if p == nil || p.Config == "" {
		return config.Load(userFile)
	}
	base, err := rawConfig(userFile, true)
	if err != nil {
		return nil, err
	}
	over, err := rawConfig(p.Config, false)
	if err != nil {
		return nil, err
	}
	merged, err := json.Marshal(mergeJSON(base, over))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", config.ErrInvalid, err)
	}
	return config.Parse(userFile+" + "+p.Config, merged)
}

func rawConfig(path string, optional bool) (map[string]any, error) {
	data, err := ownfs.ReadUser(path, ownfs.MaxConfig)
	if err != nil {
		if optional && os.IsNotExist(err) {
			return map[string]any{}, nil
		}
		return nil, fmt.Errorf("%w: %s: %v", config.ErrInvalid, path, err)
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", config.ErrInvalid, path, err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(std, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", config.ErrInvalid, path, err)
	}
	// A profile config may carry "version" like ama's; this config has none.
	delete(m, "version")
	return m, nil
}

func mergeJSON(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if bo, ok := out[k].(map[string]any); ok {
			if oo, ok := v.(map[string]any); ok {
				out[k] = mergeJSON(bo, oo)
				continue
			}
		}
		out[k] = v
	}
	return out
}

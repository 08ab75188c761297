package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/mcpclient"
	"github.com/armadra/ama-rpc/session"
)

// wireMCP reads the configured MCP servers (the user config with the
// profile's merged in, and the project's when it is trusted) and sets
// deps.MCP, which gives every root session those servers plus the ones
// its ACP client names. A config error is exit 3; a project's servers in
// an untrusted project are left out, and every session says so.
func wireMCP(deps *session.Deps, cwd string, user, project *config.Config, trusted bool, log *zap.Logger) error {
	users, err := mcpclient.ParseConfig(user.McpServers, mcpclient.SourceConfig)
	if err != nil {
		return fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	var projects []mcpclient.Server
	var problems []error
	if len(project.McpServers) > 0 {
		if !trusted {
			log.Warn("the project's mcpServers are left out: the project is not trusted (--trust)")
			problems = append(problems, errors.New("the project's MCP servers (.ama/config.json mcpServers) are left out: the project is not trusted (start with --trust)"))
		} else if projects, err = mcpclient.ParseConfig(project.McpServers, mcpclient.SourceProject); err != nil {
			return fmt.Errorf("%w: %s: %w", config.ErrInvalid, config.ProjectFile(cwd), err)
		}
	}
	base, dups := mcpclient.Merge(users, projects)
	problems = append(problems, dups...)
	env := deps.Settings.ToolEnv
	deps.MCP = func(cwd string, extra []json.RawMessage) session.MCP {
		acp, errs := mcpclient.ParseACP(extra)
		all, dups := mcpclient.Merge(base, acp)
		errs = append(append(append([]error(nil), problems...), errs...), dups...)
		if len(all) == 0 && len(errs) == 0 {
			return nil
		}
		return mcpclient.NewSet(all, errs, mcpclient.Options{Log: log, Cwd: cwd, Env: env, Version: Version, StartTimeout: 30 * time.Second})
	}
	return nil
}

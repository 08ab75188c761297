package app

import (
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/sandbox"
)

// buildSandbox resolves the sandbox settings (user config, project config
// that may only tighten, AMA_SANDBOX) and probes the kernel once. A wanted
// but unavailable sandbox is logged on stderr: bash then asks as without it.
// sessions is the session directory (sessionsDir; relative: to cwd), hidden
// from sandboxed commands like ama's data directory.
func buildSandbox(getenv func(string) string, paths config.Paths, user, project *config.Config, sessions, cwd string, log *zap.Logger) (*sandbox.Runtime, error) {
	s, warns, err := sandbox.Resolve(user.Sandbox, project.Sandbox, getenv("AMA_SANDBOX"), paths.Home)
	for _, w := range warns {
		log.Warn("sandbox config: " + w)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", config.ErrInvalid, err)
	}
	self, err := os.Executable()
	if err != nil && s.Wanted() {
		log.Warn("sandbox: cannot find the ama-rpc executable to launch it", zap.Error(err))
	}
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" && paths.Home != "" {
		cache = filepath.Join(paths.Home, ".cache")
	}
	if cache != "" {
		cache = filepath.Join(cache, "ama", "sandbox")
	}
	if sessions != "" && !filepath.IsAbs(sessions) {
		sessions = filepath.Join(cwd, sessions)
	}
	rt := sandbox.New(s, self, sandbox.Dirs{Home: paths.Home, Temp: tmp, Cache: cache, Config: paths.Config, Data: paths.Data, Sessions: sessions})
	switch st := rt.Status(); {
	case !s.Wanted():
	case !rt.Active():
		log.Warn("sandbox unavailable: bash commands run without it and ask as usual", zap.String("detail", st.Detail))
	default:
		if s.NetworkDenied && !rt.NetworkDenied() {
			log.Warn("sandbox: the network cannot be denied on this kernel; sandboxed commands still ask", zap.Int("abi", st.ABI))
		}
		log.Info("sandbox active", zap.String("mechanism", st.Mechanism), zap.Int("abi", st.ABI),
			zap.Bool("namespaces", st.Namespaces), zap.Bool("networkDenied", rt.NetworkDenied()), zap.String("detail", st.Detail))
	}
	return rt, nil
}

// verifySandbox runs the sandbox's canary self-test in the background (it
// starts processes, so it must not delay hello) and logs a failure: bash
// then asks as without the sandbox, and get_state says why.
// AMA_NO_SANDBOX_SELFTEST=1 skips it (reproducible transcripts): get_state
// then never says verified.
func verifySandbox(getenv func(string) string, rt *sandbox.Runtime, log *zap.Logger) {
	if !rt.Active() || getenv("AMA_NO_SANDBOX_SELFTEST") == "1" {
		return
	}
	go func() {
		v := rt.Verify()
		if !v.Verified {
			log.Warn("sandbox self-test: some probes got through", zap.Strings("failed", v.Failed), zap.String("detail", v.Detail))
		}
	}()
}

package app

import (
	"os"
	"strings"
	"testing"
)

// TestMain removes the locale variables (LANG, LANGUAGE, LC_*) from the
// test process: each test gives ama-rpc its own environment, but the
// commands the bash tool runs inherit the process's, and their output
// must not depend on the machine's locale.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "LANG" || k == "LANGUAGE" || strings.HasPrefix(k, "LC_") {
			_ = os.Unsetenv(k)
		}
	}
	os.Exit(m.Run())
}

// Package acp_test runs the end-to-end test of `ama-rpc --mode acp` with
// the official ACP TypeScript SDK as the client (e2e.mjs). CI installs the
// SDK with `npm ci --prefix test/acp` before `make test`.
package acp_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/test/testbin"
)

func TestACPWithTypeScriptSDK(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the ACP end-to-end test needs Node.js (20 or newer)")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		t.Skip("test/acp/node_modules is missing: run `npm ci --prefix test/acp` to install the ACP SDK")
	}
	tmp := t.TempDir()
	bin, err := testbin.Path(tmp, "../../cmd/ama-rpc")
	if err != nil {
		t.Fatal(err)
	}
	// The MCP server the SDK client configures in session/new (issue 32).
	mcpBin, err := testbin.Tool(tmp, "mcpserver", "../mcpserver/cmd")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "e2e.mjs", tmp)
	cmd.Env = append(os.Environ(), "AMA_RPC_BIN="+bin, "AMA_MCP_SERVER_BIN="+mcpBin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("node e2e.mjs: %v\n%s", err, out.String())
	}
	t.Logf("%s", bytes.TrimSpace(out.Bytes()))
}

// make test runs this package through make-test.sh, which must say SKIP
// and why when the test skipped (go test's summary would say ok), the ok
// line when it ran, and everything when it failed. A stub stands in for
// the go command.
func TestMakeTestReportsSkip(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		rc        int
		want      string
	}{
		{"skip", "=== RUN   TestACPWithTypeScriptSDK\n    e2e_test.go:21: node is not installed\n--- SKIP: TestACPWithTypeScriptSDK (0.00s)\nPASS\nok  \tpkg\t0.01s\n", 0,
			"SKIP\ttest/acp: node is not installed\n"},
		{"pass", "=== RUN   TestACPWithTypeScriptSDK\n    e2e_test.go:39: acp e2e: ok\n--- PASS: TestACPWithTypeScriptSDK (9.00s)\nPASS\nok  \tpkg\t9.01s\n", 0,
			"ok  \tpkg\t9.01s\n"},
		{"fail", "--- FAIL: TestACPWithTypeScriptSDK (1.00s)\nFAIL\n", 1, "--- FAIL: TestACPWithTypeScriptSDK (1.00s)\nFAIL\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "out"), []byte(tc.out), 0o644); err != nil {
				t.Fatal(err)
			}
			stub := filepath.Join(dir, "go")
			src := "#!/bin/sh\ncat " + filepath.Join(dir, "out") + "\nexit " + string(rune('0'+tc.rc)) + "\n"
			if err := os.WriteFile(stub, []byte(src), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "make-test.sh")
			cmd.Env = append(os.Environ(), "GO="+stub)
			out, err := cmd.Output()
			if (err != nil) != (tc.rc != 0) {
				t.Fatalf("exit: %v", err)
			}
			if string(out) != tc.want {
				t.Errorf("printed %q, want %q", out, tc.want)
			}
		})
	}
}

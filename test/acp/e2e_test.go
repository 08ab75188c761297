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
	bin := filepath.Join(tmp, "ama-rpc")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/ama-rpc")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "e2e.mjs", tmp)
	cmd.Env = append(os.Environ(), "AMA_RPC_BIN="+bin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("node e2e.mjs: %v\n%s", err, out.String())
	}
	t.Logf("%s", bytes.TrimSpace(out.Bytes()))
}

package app_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/app"
)

func runSchemaCmd(t *testing.T, cwd string, args ...string) (int, []byte, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := app.Main(t.Context(), app.Env{
		Args: append([]string{"schema"}, args...), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Cwd: cwd,
	})
	return code, out.Bytes(), errb.String()
}

func TestSchemaCommand(t *testing.T) {
	cwd := t.TempDir()
	code, stdout, stderr := runSchemaCmd(t, cwd)
	if code != app.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal(stdout, &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v", err)
	}
	if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" || doc["x-protocolVersion"] != float64(1) {
		t.Errorf("$schema %v, x-protocolVersion %v", doc["$schema"], doc["x-protocolVersion"])
	}

	code, written, stderr := runSchemaCmd(t, cwd, "--out", "out/schemas")
	if code != app.ExitOK || len(written) != 0 {
		t.Fatalf("--out: exit %d, stdout %q, stderr %s", code, written, stderr)
	}
	file, err := os.ReadFile(filepath.Join(cwd, "out", "schemas", "rpc.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, stdout) {
		t.Error("the file differs from stdout")
	}

	if code, _, _ := runSchemaCmd(t, cwd, "extra"); code != app.ExitUsage {
		t.Errorf("stray argument: exit %d", code)
	}
}

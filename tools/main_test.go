package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newEnv returns a session environment rooted in a fresh temp directory.
func newEnv(t *testing.T) *tools.Env {
	t.Helper()
	root := t.TempDir()
	cwd := filepath.Join(root, "work")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	return &tools.Env{
		Cwd:       cwd,
		OutputDir: filepath.Join(root, "out"),
		Reads:     tools.NewReadTracker(),
	}
}

var registry = tools.Default()

// run runs a tool through the registry with args marshalled to JSON (a
// string is used as raw JSON).
func run(t *testing.T, env *tools.Env, name string, args any) *tools.Result {
	t.Helper()
	return runCtx(t, context.Background(), env, name, args, nil)
}

func runCtx(t *testing.T, ctx context.Context, env *tools.Env, name string, args any, update func(string)) *tools.Result {
	t.Helper()
	return registry.Run(ctx, name, &tools.Call{ID: "c1", Args: rawArgs(t, args), Env: env, Update: update})
}

func rawArgs(t *testing.T, args any) json.RawMessage {
	t.Helper()
	if s, ok := args.(string); ok {
		return json.RawMessage(s)
	}
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// text joins the text blocks of a result.
func text(r *tools.Result) string { return llm.JoinText(r.Content, "\n") }

// writeFile creates a file (and its parents) below dir.
func writeFile(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustOK(t *testing.T, r *tools.Result) string {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result: %s", text(r))
	}
	return text(r)
}

func mustErr(t *testing.T, r *tools.Result, want string) string {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want error result containing %q, got success: %s", want, text(r))
	}
	if !strings.Contains(text(r), want) {
		t.Fatalf("error result %q does not contain %q", text(r), want)
	}
	return text(r)
}

func contains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("output does not contain %q:\n%s", w, got)
		}
	}
}

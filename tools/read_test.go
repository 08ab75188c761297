package tools_test

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	return b.String()
}

func TestReadText(t *testing.T) {
	env := newEnv(t)
	p := writeFile(t, env.Cwd, "src/a.txt", "alpha\r\nbeta\n\tgamma")
	got := mustOK(t, run(t, env, "read", map[string]any{"path": "src/a.txt"}))
	want := "     1\talpha\n     2\tbeta\n     3\t\tgamma"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !env.Reads.Has(p) {
		t.Error("read did not mark the file")
	}
	// Absolute paths work too.
	if got2 := mustOK(t, run(t, env, "read", map[string]any{"path": p})); got2 != want {
		t.Errorf("absolute path: %q", got2)
	}
}

func TestReadPaging(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "big.txt", numbered(1, 3000))
	tests := []struct {
		name          string
		args          map[string]any
		first, last   string
		note, notNote string
	}{
		{"default limit", map[string]any{"path": "big.txt"}, "     1\tl1\n", "  2000\tl2000", "continue with offset=2001", ""},
		{"offset", map[string]any{"path": "big.txt", "offset": 2990}, "  2990\tl2990\n", "  3000\tl3000", "", "continue"},
		{"offset and limit", map[string]any{"path": "big.txt", "offset": 10, "limit": 5}, "    10\tl10\n", "    14\tl14", "Showing lines 10-14 of 3000; continue with offset=15", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, env, "read", tt.args)
			got := mustOK(t, r)
			if !strings.HasPrefix(got, tt.first) {
				t.Errorf("starts %q", got[:min(40, len(got))])
			}
			body := got
			if i := strings.Index(got, "\n\n["); i >= 0 {
				body = got[:i]
			}
			if !strings.HasSuffix(body, tt.last) {
				t.Errorf("body ends %q", body[max(0, len(body)-40):])
			}
			if tt.note != "" {
				contains(t, got, tt.note)
			}
			if tt.notNote != "" && strings.Contains(got, tt.notNote) {
				t.Errorf("unexpected %q in %s", tt.notNote, got[max(0, len(got)-200):])
			}
		})
	}
	mustErr(t, run(t, env, "read", map[string]any{"path": "big.txt", "offset": 3001}), "past the end")
}

func TestReadLongLinesAndBudget(t *testing.T) {
	env := newEnv(t)
	long := strings.Repeat("é", 2500)
	writeFile(t, env.Cwd, "long.txt", "short\n"+long+"\nend\n")
	got := mustOK(t, run(t, env, "read", map[string]any{"path": "long.txt"}))
	contains(t, got, strings.Repeat("é", 2000)+" …", "     3\tend", "longer than 2000 characters were cut")
	if strings.Contains(got, strings.Repeat("é", 2001)) {
		t.Error("long line not cut")
	}

	// 2000 lines of 100 characters exceed the 30 000 character budget: the
	// page stops early and says where to go on.
	var b strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&b, "%04d%s\n", i, strings.Repeat("x", 96))
	}
	writeFile(t, env.Cwd, "wide.txt", b.String())
	r := run(t, env, "read", map[string]any{"path": "wide.txt"})
	got = mustOK(t, r)
	if len([]rune(got)) > tools.MaxResultChars {
		t.Errorf("page has %d characters", len([]rune(got)))
	}
	d := r.Details.(tools.ReadDetails)
	if d.NextOffset == 0 || d.NextOffset > 400 {
		t.Fatalf("details %+v", d)
	}
	contains(t, got, fmt.Sprintf("continue with offset=%d", d.NextOffset))
	next := mustOK(t, run(t, env, "read", map[string]any{"path": "wide.txt", "offset": d.NextOffset, "limit": 1}))
	if !strings.HasPrefix(next, fmt.Sprintf("%6d\t%04d", d.NextOffset, d.NextOffset)) {
		t.Errorf("next page starts %q", next[:20])
	}
}

// A 1x1 PNG.
const pngB64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

func TestReadImage(t *testing.T) {
	env := newEnv(t)
	png, _ := base64.StdEncoding.DecodeString(pngB64)
	for _, name := range []string{"pic.png", "noext"} { // magic bytes decide
		p := writeFile(t, env.Cwd, name, string(png))
		r := run(t, env, "read", map[string]any{"path": name})
		mustOK(t, r)
		if len(r.Content) != 2 {
			t.Fatalf("%s: %d blocks", name, len(r.Content))
		}
		contains(t, text(r), name, "image/png")
		img, ok := r.Content[1].(*llm.ImageContent)
		if !ok || img.MimeType != "image/png" || img.Data != pngB64 {
			t.Fatalf("%s: image block %+v", name, r.Content[1])
		}
		if !env.Reads.Has(p) {
			t.Errorf("%s not marked read", name)
		}
	}
	for name, data := range map[string]string{
		"a.gif":  "GIF89a\x01\x00\x01\x00",
		"a.jpg":  "\xff\xd8\xff\xe0\x00\x10JFIF",
		"a.webp": "RIFF\x10\x00\x00\x00WEBPVP8 ",
	} {
		writeFile(t, env.Cwd, name, data)
		r := run(t, env, "read", map[string]any{"path": name})
		mustOK(t, r)
		if _, ok := r.Content[1].(*llm.ImageContent); !ok {
			t.Errorf("%s: not an image", name)
		}
	}
	writeFile(t, env.Cwd, "fake.png", "not really a png")
	mustErr(t, run(t, env, "read", map[string]any{"path": "fake.png"}), "not a PNG, JPEG, GIF or WebP")
}

func TestReadFailures(t *testing.T) {
	env := newEnv(t)
	p := writeFile(t, env.Cwd, "blob.bin", "ab\x00cd")
	writeFile(t, env.Cwd, "empty.txt", "")
	writeFile(t, env.Cwd, "dir/x", "x")
	mustErr(t, run(t, env, "read", map[string]any{"path": "blob.bin"}), "blob.bin is a binary file")
	if env.Reads.Has(p) {
		t.Error("binary file marked read")
	}
	mustErr(t, run(t, env, "read", map[string]any{"path": "missing.txt"}), "File not found: missing.txt")
	mustErr(t, run(t, env, "read", map[string]any{"path": "dir"}), "dir is a directory")
	got := mustOK(t, run(t, env, "read", map[string]any{"path": "empty.txt"}))
	contains(t, got, "empty.txt is empty")
	if !env.Reads.Has(filepath.Join(env.Cwd, "empty.txt")) {
		t.Error("empty file not marked read")
	}
}

func TestReadHome(t *testing.T) {
	env := newEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, home, "notes.txt", "hi\n")
	got := mustOK(t, run(t, env, "read", map[string]any{"path": "~/notes.txt"}))
	if got != "     1\thi" {
		t.Errorf("got %q", got)
	}
}

//go:build unix

package tools

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// The differential test: the fast grep, glob and read (issue 19) give
// the same results as the ones before it on generated trees with ignore
// files, binary files, long and invalid lines, CRLF, symlinks in and out
// of the project, a FIFO, many matches and context. The old tools'
// answers are recorded in testdata/<test name>.json.gz (the old code
// itself is gone); a deliberate change of output is recorded again with
// UPDATE_GOLDEN=1 (review the diff of the decoded file).

// diffTree writes a tree below cwd (and a file outside it, for links).
func diffTree(t *testing.T, rng *rand.Rand, cwd, outside string) []string {
	t.Helper()
	put := func(rel, content string) {
		p := filepath.Join(cwd, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	words := []string{"needle", "Needle", "NEEDLE", "haystack", "foo", "foo.bar", "fooxbar", "a(b", "K", "\u212a", "k",
		"\u017f", "s", "é", "É", "\uFFFD", "\xff\xfe", "\t", "x", "xx", "needlehaystack", "end$", "^start", "a\\nb"}
	line := func() string {
		n := rng.IntN(8)
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString([]string{" ", " ", "  ", "\t", ""}[rng.IntN(5)])
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	text := func(lines int) string {
		var b strings.Builder
		for range lines {
			b.WriteString(line())
			if rng.IntN(6) == 0 {
				b.WriteByte('\r')
			}
			b.WriteByte('\n')
		}
		if rng.IntN(3) == 0 {
			b.WriteString(line()) // no final newline
		}
		return b.String()
	}
	// Fixed corner cases.
	put(".gitignore", "*.log\nbuild/\n!keep.log\n/top-only.txt\n")
	put("keep.log", "needle kept\n")
	put("drop.log", "needle dropped\n")
	put("top-only.txt", "needle top\n")
	put("build/out.go", "needle built\n")
	put("empty.txt", "")
	put("newline.txt", "\n")
	put("newlines.txt", "\n\n\n")
	put("crlf.txt", "needle\r\nhaystack\r\n\r\nneedle end\r\n")
	put("cr-only.txt", "needle\rhaystack\rneedle\n")
	put("nofinal.txt", "haystack\nneedle")
	put("long.txt", strings.Repeat("y", 700)+" needle\n"+strings.Repeat("é", 600)+"needle\n"+strings.Repeat("\xff", 520)+"needle\n")
	put("invalid.txt", "ne\xffedle\nneedle\xff\xfe\n\xed\xa0\x80needle\n")
	put("bin-early.dat", "needle\n\x00needle\n")
	put("bin-late.dat", strings.Repeat("needle\n", 1300)+"\x00needle\n") // the NUL after the first 8192 bytes
	put("huge.txt", "needle\n"+strings.Repeat("z", GrepMaxFileBytes))
	put("many.txt", strings.Repeat("needle haystack\nfoo\n", 400))
	put("dense.txt", strings.Repeat("needle\n", 150))
	put("kelvin.txt", "\u212a\nk\nK\n\u017f\nS\n")
	put(".git/config", "needle in git\n")
	put("lib/.ignore", "gen/\n")
	put("lib/gen/z.go", "needle generated\n")
	put("lib/sub/.gitignore", "secret*\n!secret-ok.go\n")
	put("lib/sub/secret.go", "needle secret\n")
	put("lib/sub/secret-ok.go", "needle ok\n")
	put("big-lines.txt", strings.Repeat(strings.Repeat("w", 120)+"\n", 3000))
	// Random files.
	dirs := []string{"", "a", "a/b", "a/b/c", "lib", "lib/sub", "d e", "x.go"}
	exts := []string{".go", ".txt", ".md", "", ".log"}
	for i := range 40 {
		dir := dirs[rng.IntN(len(dirs))]
		name := fmt.Sprintf("f%02d%s", i, exts[rng.IntN(len(exts))])
		put(filepath.Join(dir, name), text(rng.IntN(30)))
	}
	// Links: to a file inside, to a file outside, to a directory, broken,
	// to a link, and a FIFO.
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("needle outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"link-in.txt":      "crlf.txt",
		"link-out.txt":     filepath.Join(outside, "secret.txt"),
		"link-dir":         "lib",
		"link-broken":      "nope",
		"a/link-link.txt":  "../link-in.txt",
		"a/link-ignored":   "../drop.log",
		"lib/link-up.go":   "../many.txt",
		"link-outside-dir": outside,
	}
	for rel, target := range links {
		p := filepath.Join(cwd, rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(cwd, "a", "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Distinct modification times in walk order (glob sorts by them), so
	// that the recorded answers do not depend on how fast the tree was
	// written; a link's target takes the last of them.
	var files []string
	_ = filepath.WalkDir(cwd, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(cwd, p)
			files = append(files, rel)
			at := time.Unix(1_700_000_000+int64(len(files))*60, 0)
			_ = os.Chtimes(p, at, at)
		}
		return nil
	})
	return files
}

var savedName = regexp.MustCompile(`(grep|glob|read)-[0-9]+\.txt`)

// answer is one recorded result: text, error flag, details as JSON; the
// test's temporary root reads <root>.
type answer struct {
	Text    string          `json:"t"`
	IsError bool            `json:"e,omitempty"`
	Details json.RawMessage `json:"d,omitempty"`
}

// recorded holds the old tools' answers by call (see the top of the file).
type recorded struct {
	t       *testing.T
	answers map[string]answer
	root    string
	update  bool
	path    string
}

func loadRecorded(t *testing.T) *recorded {
	r := &recorded{t: t, answers: map[string]answer{}, update: os.Getenv("UPDATE_GOLDEN") == "1",
		path: filepath.Join("testdata", t.Name()+".json.gz")}
	if r.update {
		t.Cleanup(r.save)
		return r
	}
	f, err := os.Open(r.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(z).Decode(&r.answers); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *recorded) save() {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	if err := json.NewEncoder(z).Encode(r.answers); err != nil || z.Close() != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(r.path, buf.Bytes(), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// check compares got with the answer recorded under key (or records it).
func (r *recorded) check(key string, got answer) {
	r.t.Helper()
	got.Text = strings.ReplaceAll(got.Text, r.root, "<root>")
	got.Details = bytes.ReplaceAll(got.Details, []byte(r.root), []byte("<root>"))
	if r.update {
		r.answers[key] = got
		return
	}
	want, ok := r.answers[key]
	if !ok {
		r.t.Fatalf("%s: no recorded answer (UPDATE_GOLDEN=1 records)", key)
	}
	if want.Text != got.Text || want.IsError != got.IsError || !bytes.Equal(want.Details, got.Details) {
		r.t.Fatalf("%s: old and new differ\nold (error %v, %s):\n%s\nnew (error %v, %s):\n%s",
			key, want.IsError, want.Details, want.Text, got.IsError, got.Details, got.Text)
	}
}

// run runs tool with args and checks its result against the recording.
func (r *recorded) run(prefix string, env *Env, tool Tool, args map[string]any) {
	r.t.Helper()
	raw, _ := json.Marshal(args)
	res := Execute(context.Background(), tool, &Call{ID: "c", Args: raw, Env: env})
	details, _ := json.Marshal(res.Details)
	r.check(prefix+" "+tool.Decl().Name+" "+string(raw), answer{
		Text: savedName.ReplaceAllString(llm.JoinText(res.Content, "\n"), "saved.txt"), IsError: res.IsError, Details: details})
}

func TestDifferentialGrepGlobRead(t *testing.T) {
	patterns := []struct {
		p       string
		literal bool
	}{
		{"needle", false}, {"Needle", false}, {"needle", true}, {"NeEdLe", false}, {"needle haystack", true}, {"sK_e", false}, {"foo.bar", true}, {"foo.bar", false},
		{"a(b", true}, {"^needle", false}, {"needle$", false}, {"^$", false}, {"x*", false}, {`\bfoo\b`, false},
		{`a\nb`, false}, {`needle\s+haystack`, false}, {`(?s)needle.haystack`, false}, {"k", false},
		{"\uFFFD", false}, {"\uFFFD", true}, {"é", false}, {`(?m)^needle`, false}, {`[^a]needle`, false},
		{"needle|haystack", false}, {`\r`, false}, {"haystack\n", true}, {"ne\xffedle", true}, {"s", false},
		{`\x{212a}`, false}, {"end$", true}, {"^start", true}, {`\S+`, false}, {"(needle)+", false},
		{`\Aneedle`, false}, {`needle\z`, false}, {"y{3}", false}, {"w", false}, {`needle(?:(?s).*zzz)?`, false},
	}
	paths := []string{"", ".", "lib", "a", "crlf.txt", "drop.log", "link-in.txt", "link-dir", "link-out.txt", "build", "nope", "a/fifo.txt", "huge.txt"}
	globs := []string{"", "*.go", "*.txt", "lib/**/*.go", "**/*.{go,txt}", "a/**", "[", "link*"}
	rec := loadRecorded(t)
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 19))
			root := t.TempDir()
			rec.t, rec.root = t, root
			key := fmt.Sprint("seed", seed)
			cwd := filepath.Join(root, "work")
			files := diffTree(t, rng, cwd, filepath.Join(root, "outside"))
			env := &Env{Cwd: cwd, OutputDir: filepath.Join(root, "out"), Reads: NewReadTracker()}

			// grep: every pattern plainly, then random combinations.
			for _, p := range patterns {
				rec.run(key, env, GrepTool{}, map[string]any{"pattern": p.p, "literal": p.literal, "limit": 1000})
				rec.run(key, env, GrepTool{}, map[string]any{"pattern": p.p, "literal": p.literal, "ignoreCase": true})
			}
			for range 150 {
				p := patterns[rng.IntN(len(patterns))]
				args := map[string]any{"pattern": p.p, "literal": p.literal}
				if rng.IntN(3) == 0 {
					args["ignoreCase"] = true
				}
				if c := rng.IntN(8); c < 6 {
					args["context"] = c
				}
				if rng.IntN(4) > 0 {
					args["limit"] = []int{1, 2, 3, 5, 7, 50, 100, 160, 1000}[rng.IntN(9)]
				}
				if rng.IntN(5) == 0 {
					args["filesOnly"] = true
				}
				if path := paths[rng.IntN(len(paths))]; path != "" {
					args["path"] = path
				}
				if g := globs[rng.IntN(len(globs))]; g != "" {
					args["glob"] = g
				}
				rec.run(key, env, GrepTool{}, args)
			}

			// glob.
			for _, pat := range []string{"**/*.go", "**/f0*", "**/**", "**/{a,b}/*", "**/d e/*", "**/[ab]", "*.txt", "**", "a/**", "*.go !a/**", "!*.log", "**/*.{go,txt}",
				"link*", "lib/sub/*", "../work/*.txt", "nothing*", "[", "* !**/b/**"} {
				for _, limit := range []int{0, 5} {
					for _, path := range []string{"", "lib", "link-dir"} {
						args := map[string]any{"pattern": pat}
						if limit > 0 {
							args["limit"] = limit
						}
						if path != "" {
							args["path"] = path
						}
						rec.run(key, env, GlobTool{}, args)
					}
				}
			}

			// read: every file with pages at the start, the middle, the end
			// and past it.
			for _, f := range files {
				offs, limits := []int{0, 2, 31}, []int{0, 1}
				if strings.HasPrefix(f, "big-lines") || strings.HasPrefix(f, "many") {
					offs, limits = []int{0, 2, 31, 400, 2001, 3000, 3001}, []int{0, 1, 2000}
				}
				for _, off := range offs {
					for _, limit := range limits {
						args := map[string]any{"path": f}
						if off > 0 {
							args["offset"] = off
						}
						if limit > 0 {
							args["limit"] = limit
						}
						rec.run(key, env, ReadTool{}, args)
					}
				}
			}
		})
	}
}

// The scan bound of read, compared byte by byte: the bound falling before,
// on and after line ends, with pages before, on and after it.
func TestDifferentialReadScanBound(t *testing.T) {
	rec := loadRecorded(t)
	rec.root = "\x00" // no temporary root
	contents := []string{"", "\n", "a", "a\n", "a\nb", "a\nb\n", "a\r\nbb\r\nccc\r\n", "line one\nline two\n\nline four",
		strings.Repeat("0123456789\n", 40), strings.Repeat("x", 300) + "\n" + strings.Repeat("y", 70000) + "\nz"}
	for ci, c := range contents {
		for scan := int64(0); scan <= int64(len(c))+2; scan += 1 + int64(len(c))/37 {
			for _, off := range []int{0, 1, 2, 3, 5, 40, 41} {
				for _, limit := range []int{0, 1, 2, 3} {
					res, err := readTextScan(context.Background(), strings.NewReader(c), "f", off, limit, MaxResultChars, scan)
					got, _ := json.Marshal(res)
					rec.check(fmt.Sprintf("scan content %d, scan %d, offset %d, limit %d", ci, scan, off, limit), answer{Text: fmt.Sprint(err), Details: got})
				}
			}
		}
	}
}

// A grep aborted mid-walk returns ctx's error, like before, and leaves no
// worker behind (goleak in TestMain).
func TestGrepAbortMidWalk(t *testing.T) {
	root := t.TempDir()
	for i := range 300 {
		p := filepath.Join(root, fmt.Sprintf("d%d", i%7), fmt.Sprintf("f%d.txt", i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, bytes.Repeat([]byte("haystack\n"), 50), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env := &Env{Cwd: root, Reads: NewReadTracker()}
	res, err := GrepTool{}.Execute(ctx, &Call{Args: json.RawMessage(`{"pattern":"needle"}`), Env: env})
	if err == nil {
		t.Fatalf("want ctx's error, got %+v", res)
	}
}

func TestRelInsideFastPath(t *testing.T) {
	for _, c := range [][2]string{{"/a", "/a/b"}, {"/a", "/a/b/c.go"}, {"/a/", "/a/b"}, {"/a", "/a//b"}, {"/a", "/a/./b"},
		{"/a", "/a/../b"}, {"/a", "/a/b/.."}, {"/a", "/a/b/"}, {"/a", "/ab"}, {"/a/./x", "/a/./x/y"}, {"/", "/x"},
		{"/a", "/a"}, {"/a", "/a/.."}, {"/a", "/a/..b"}, {"/a", "/a/.b/c"}, {"/a/..", "/a/../b"}} {
		got, ok := relInside(c[0], c[1])
		rel, err := filepath.Rel(c[0], c[1])
		want, wantOK := filepath.ToSlash(rel), err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
		if !wantOK {
			want = ""
		}
		if got != want || ok != wantOK {
			t.Errorf("relInside(%q, %q) = %q, %v; want %q, %v", c[0], c[1], got, ok, want, wantOK)
		}
	}
}

func TestIndexFoldASCII(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 19))
	alpha := []byte("aAbBzZ_.\n\xc3\xa9")
	for range 3000 {
		data := make([]byte, rng.IntN(40))
		for i := range data {
			data[i] = alpha[rng.IntN(len(alpha))]
		}
		needle := make([]byte, 1+rng.IntN(3))
		for i := range needle {
			needle[i] = "abz_."[rng.IntN(5)]
		}
		var lower []byte
		for _, c := range data {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower = append(lower, c)
		}
		want := bytes.Index(lower, needle)
		for rare := range needle {
			if got := indexFoldASCII(data, needle, rare); got != want {
				t.Fatalf("indexFoldASCII(%q, %q, %d) = %d, want %d", data, needle, rare, got, want)
			}
		}
	}
	if got := asciiFoldRun([]rune("ErrShortWrite")); string(got) != "hortwrite" {
		t.Errorf("asciiFoldRun = %q", got) // S folds to ſ (U+017F)
	}
}

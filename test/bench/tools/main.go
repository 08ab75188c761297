// Command tools measures the grep, glob and read tools side by side with
// the native tools that are their floor, in the same run on the same
// files: grep over Go's own src against ripgrep and GNU grep, glob
// `**/*.go` against fd, and read of the first page of a 50 MB file against
// `wc -l`. Each round runs ours and the floor back to back (alternating
// which goes first); the ratio reported is the median of the per-round
// ratios. Our tools run in process through tools.Execute (what a session
// does); the floors are spawned, so their times include process start-up
// (about a millisecond).
//
//	go run ./test/bench/tools [-corpus $(go env GOROOT)/src] [-runs 9]
//
// A floor whose binary is missing is skipped with a message (make bench
// installs ripgrep and fd-find with apt first: test/bench/tools-deps.sh).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/tools"
)

func main() {
	corpus := flag.String("corpus", "", "directory to search (default: $(go env GOROOT)/src)")
	runs := flag.Int("runs", 9, "rounds per row (the median is reported)")
	literal := flag.String("literal", "ErrShortWrite", "literal pattern of the grep rows (few matches: a full scan)")
	regex := flag.String("regex", `func \(\w+ \*Writer\) Write\(`, "regular expression of the regex grep row")
	readMB := flag.Int("read-mb", 50, "size of the file of the read row, in MB")
	only := flag.String("rows", "grep,glob,read", "comma-separated rows to run")
	flag.Parse()
	if *corpus == "" {
		*corpus = filepath.Join(goroot(), "src")
	}
	dir, err := os.MkdirTemp("", "ama-bench-tools-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	env := &tools.Env{Cwd: *corpus, OutputDir: filepath.Join(dir, "out"), Reads: tools.NewReadTracker()}
	fmt.Printf("tools against their floors: corpus %s (%d files), %d rounds, GOMAXPROCS %d\n\n",
		*corpus, countFiles(*corpus), *runs, runtime.GOMAXPROCS(0))
	fmt.Printf("%-44s | %10s | %10s | %6s | %s\n", "what", "ours", "floor", "ratio", "floor command")
	fmt.Printf("%s\n", strings.Repeat("-", 110))

	want := func(r string) bool { return strings.Contains(","+*only+",", ","+r+",") }
	if want("grep") {
		grepRows(env, *corpus, *literal, *regex, *runs)
	}
	if want("glob") {
		row{what: "glob **/*.go", tool: tools.GlobTool{}, args: map[string]any{"pattern": "**/*.go"}, env: env,
			floor: []string{"fdfind", "-t", "f", "-e", "go", ".", *corpus}}.run(*runs)
	}
	if want("read") {
		big := filepath.Join(dir, "big.txt")
		writeBig(big, *readMB<<20)
		row{what: fmt.Sprintf("read %d MB file, first page", *readMB), tool: tools.ReadTool{},
			args: map[string]any{"path": big}, env: &tools.Env{Cwd: dir, Reads: tools.NewReadTracker()},
			floor: []string{"wc", "-l", big}}.run(*runs)
	}
}

func grepRows(env *tools.Env, corpus, literal, regex string, runs int) {
	grepLit := map[string]any{"pattern": literal, "limit": 1000}
	grepRe := map[string]any{"pattern": regex, "limit": 1000}
	row{what: "grep literal, full scan", tool: tools.GrepTool{}, args: grepLit, env: env,
		floor: []string{"rg", "-n", "--no-heading", "-F", literal, corpus}}.run(runs)
	row{what: "grep literal, full scan", tool: tools.GrepTool{}, args: grepLit, env: env,
		floor: []string{"grep", "-rnF", literal, corpus}}.run(runs)
	grepFold := map[string]any{"pattern": literal, "ignoreCase": true, "limit": 1000}
	row{what: "grep literal, ignoreCase, full scan", tool: tools.GrepTool{}, args: grepFold, env: env,
		floor: []string{"rg", "-n", "--no-heading", "-i", "-F", literal, corpus}}.run(runs)
	row{what: "grep regex, full scan", tool: tools.GrepTool{}, args: grepRe, env: env,
		floor: []string{"rg", "-n", "--no-heading", regex, corpus}}.run(runs)
	row{what: "grep regex, full scan", tool: tools.GrepTool{}, args: grepRe, env: env,
		floor: []string{"grep", "-rnE", strings.ReplaceAll(regex, `\w`, `[[:alnum:]_]`), corpus}}.run(runs)
}

type row struct {
	what  string
	tool  tools.Tool
	args  map[string]any
	env   *tools.Env
	floor []string
}

func (r row) run(runs int) {
	name := r.what
	if len(name) > 44 {
		name = name[:44]
	}
	bin, err := exec.LookPath(r.floor[0])
	if err != nil {
		fmt.Printf("%-44s | %10s | %10s | %6s | skipped: %s not installed (apt-get install %s)\n", name, "-", "-", "-",
			r.floor[0], map[string]string{"rg": "ripgrep", "fdfind": "fd-find"}[r.floor[0]])
		return
	}
	raw, _ := json.Marshal(r.args)
	ours := func() time.Duration {
		start := time.Now()
		res := tools.Execute(context.Background(), r.tool, &tools.Call{ID: "bench", Args: raw, Env: r.env})
		d := time.Since(start)
		if res.IsError {
			fail(fmt.Errorf("%s: %s", r.what, llm.JoinText(res.Content, "\n")))
		}
		return d
	}
	floor := func() time.Duration {
		var out bytes.Buffer
		cmd := exec.Command(bin, r.floor[1:]...)
		cmd.Stdout = &out
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) { // 1: grep found nothing
			fail(fmt.Errorf("%s: %v", strings.Join(r.floor, " "), err))
		}
		return d
	}
	ours() // warm the page cache and the process
	floor()
	var o, f []time.Duration
	var ratios []float64
	for i := 0; i < runs; i++ {
		var a, b time.Duration
		if i%2 == 0 {
			a, b = ours(), floor()
		} else {
			b, a = floor(), ours()
		}
		o, f = append(o, a), append(f, b)
		ratios = append(ratios, float64(a)/float64(b))
	}
	sort.Float64s(ratios)
	fmt.Printf("%-44s | %10s | %10s | %5.2fx | %s\n", name, median(o).Round(10*time.Microsecond),
		median(f).Round(10*time.Microsecond), ratios[len(ratios)/2], strings.Join(shorten(r.floor), " "))
}

// shorten prints long paths of a floor command by their base name.
func shorten(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if filepath.IsAbs(a) && i > 0 {
			a = ".../" + filepath.Base(a)
		}
		out[i] = a
	}
	return out
}

// writeBig writes a text file of about size bytes in lines of source-like
// length (0 to 99 characters).
func writeBig(path string, size int) {
	var b bytes.Buffer
	b.Grow(size + 128)
	line := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog; ", 3))
	for i := 0; b.Len() < size; i++ {
		b.Write(line[:(i*37)%100])
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		fail(err)
	}
}

func countFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

func goroot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return runtime.GOROOT()
	}
	return strings.TrimSpace(string(out))
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench tools:", err)
	os.Exit(1)
}

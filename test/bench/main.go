// Command bench measures ama-rpc end to end as a host sees it: it spawns
// the binary, talks to it over pipes and reports time to hello, the
// baseline RSS of a server waiting on stdin, time to agent_settled, stdout
// bytes and peak RSS for fake replies of many deltas.
//
//	go run ./test/bench -bin ./bin/ama-rpc [-deltas 10000,1000000] [-runs 5]
//	go run ./test/bench -bin ./bin/ama-rpc -acp 100000 (the ACP vs rpc row only)
//	go run ./test/bench -bin ./bin/ama-rpc -start 25 (the start-up rows only)
//	go run ./test/bench -bin ./bin/ama-rpc -sandbox 20 [-load 16] (the bash sandbox rows only)
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "./bin/ama-rpc", "ama-rpc binary")
	deltas := flag.String("deltas", "10000,1000000", "comma-separated reply sizes in deltas")
	runs := flag.Int("runs", 5, "runs per scenario (the median is reported)")
	modes := flag.Int("acp", 0, "only the ACP vs rpc row: one reply of this many deltas in both modes")
	starts := flag.Int("start", 0, "only the start-up rows (time to hello, baseline RSS) over this many starts")
	acpNews := flag.Int("acpnew", 0, "only the ACP session/new row: this many new sessions in one process")
	sbCalls := flag.Int("sandbox", 0, "only the bash sandbox rows: sessions of this many bash calls, sandbox on vs off, and time to hello on vs off")
	load := flag.Int("load", 0, "with -sandbox: run the rows again with this many busy loops")
	flag.Parse()
	abs, err := filepath.Abs(*bin)
	if err != nil {
		fail(err)
	}
	*bin = abs
	dir, err := os.MkdirTemp("", "ama-bench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	if *modes > 0 {
		compareModes(*bin, dir, *modes, *runs)
		return
	}
	if *acpNews > 0 {
		acpNew(*bin, dir, *acpNews)
		return
	}
	if *sbCalls > 0 {
		sandboxRows(*bin, dir, *sbCalls, *runs, *load)
		return
	}

	n := *runs * 4
	if *starts > 0 {
		n = *starts
	}
	var hello []time.Duration
	var rss, hwm, anon, file, idle, idleAnon []int64
	for i := 0; i < n; i++ {
		b := baseline(*bin, dir)
		hello = append(hello, b.hello)
		rss, hwm = append(rss, b.rss), append(hwm, b.hwm)
		anon, file = append(anon, b.anon), append(file, b.file)
		idle, idleAnon = append(idle, b.idle), append(idleAnon, b.idleAnon)
	}
	fmt.Printf("%-28s %10s\n", "scenario", "median")
	fmt.Printf("%-28s %10s   (n=%d, min %s, max %s)\n", "time to hello", median(hello).Round(10*time.Microsecond),
		len(hello), minOf(hello).Round(10*time.Microsecond), maxOf(hello).Round(10*time.Microsecond))
	// The binary's own pages (RssFile) depend on how the kernel cached the
	// file (large folios map 2 MiB at a time); RssAnon is the process's.
	fmt.Printf("%-28s %7.1f MiB   (VmRSS idle after hello and one get_state: anonymous %.1f, file %.1f; VmHWM %.1f; n=%d, min %.1f, max %.1f)\n",
		"baseline RSS", mib(median(rss)), mib(median(anon)), mib(median(file)), mib(median(hwm)), len(rss),
		mib(slices.Min(rss)), mib(slices.Max(rss)))
	fmt.Printf("%-28s %7.1f MiB   (VmRSS %s later: anonymous %.1f; n=%d, min %.1f, max %.1f)\n", "baseline RSS, idle",
		mib(median(idle)), idleAfter, mib(median(idleAnon)), len(idle), mib(slices.Min(idle)), mib(slices.Max(idle)))
	if *starts > 0 {
		return
	}

	if node, err := exec.LookPath("node"); err == nil {
		// Start-up with a trivial host adapter versus Node's own start-up.
		adapter := filepath.Join(dir, "trivial.cjs")
		if err := os.WriteFile(adapter, []byte(`module.exports = {hostApi: 1, create: () => ({id: "trivial"})}`), 0o644); err != nil {
			fail(err)
		}
		var withHost, bare []time.Duration
		for i := 0; i < *runs*4; i++ {
			withHost = append(withHost, timeToHello(*bin, dir, "--host", adapter))
			start := time.Now()
			if err := exec.Command(node, "-e", "0").Run(); err != nil {
				fail(err)
			}
			bare = append(bare, time.Since(start))
		}
		fmt.Printf("%-28s %10s   (n=%d, min %s, max %s)\n", "time to hello, --host", median(withHost).Round(10*time.Microsecond),
			len(withHost), minOf(withHost).Round(10*time.Microsecond), maxOf(withHost).Round(10*time.Microsecond))
		fmt.Printf("%-28s %10s   (host overhead over node: %s)\n", "node -e 0", median(bare).Round(10*time.Microsecond),
			(median(withHost) - median(bare)).Round(10*time.Microsecond))
	}

	for _, f := range strings.Split(*deltas, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fail(err)
		}
		script := filepath.Join(dir, fmt.Sprintf("script-%d.json", n))
		writeScript(script, n)
		var settle []time.Duration
		var last result
		var peak int64
		for i := 0; i < *runs; i++ {
			r := reply(*bin, dir, script)
			if r.deltas != n {
				fail(fmt.Errorf("%d-delta reply: rebuilt %d delta characters", n, r.deltas))
			}
			settle = append(settle, r.settle)
			last = r
			peak = max(peak, r.maxRSS)
		}
		last.maxRSS = peak
		fmt.Printf("%-28s %10s   stdout %d bytes (%.0f B/delta), %d lines, peak RSS %.1f MB\n",
			fmt.Sprintf("%d-delta reply settled", n), median(settle).Round(100*time.Microsecond),
			last.bytes, float64(last.bytes)/float64(n), last.lines, float64(last.maxRSS)/1024)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func env(dir string) []string {
	return append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "XDG_CONFIG_HOME="+filepath.Join(dir, "home", ".config"),
		"XDG_DATA_HOME="+filepath.Join(dir, "home", ".local", "share"))
}

type start struct {
	hello                time.Duration
	rss, hwm, anon, file int64 // KiB, at once
	idle, idleAnon       int64 // KiB, a second later
}

// idleAfter is how long after get_state's reply the idle RSS is read.
const idleAfter = time.Second

// baseline measures from spawn to hello (the first stdout line), then, once
// a get_state has been answered (the server is idle, waiting on stdin), the
// whole process's VmRSS and VmHWM from /proc/<pid>/status, and its VmRSS
// again a second later.
func baseline(bin, dir string) start {
	cmd := exec.Command(bin, "--model", "fake/echo", "--no-session")
	cmd.Env = env(dir)
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	br := bufio.NewReader(stdout)
	if _, err := br.ReadString('\n'); err != nil {
		fail(err)
	}
	s := start{hello: time.Since(t0)}
	if _, err := io.WriteString(stdin, `{"id":"b","type":"get_state"}`+"\n"); err != nil {
		fail(err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			fail(fmt.Errorf("stdout ended before get_state's reply: %v", err))
		}
		if strings.Contains(line, `"id":"b"`) {
			break
		}
	}
	st := status(cmd.Process.Pid)
	s.rss, s.hwm, s.anon, s.file = st["VmRSS"], st["VmHWM"], st["RssAnon"], st["RssFile"]
	// Idle: after what the server starts behind hello (the sandbox's
	// self-test) and the return of the start-up garbage (app/memory.go).
	time.Sleep(idleAfter)
	st = status(cmd.Process.Pid)
	s.idle, s.idleAnon = st["VmRSS"], st["RssAnon"]
	stdin.Close()
	_, _ = io.Copy(io.Discard, br)
	_ = cmd.Wait()
	return s
}

// status reads the memory lines (KiB) of a live process's
// /proc/<pid>/status: VmRSS, VmHWM, RssAnon, RssFile.
func status(pid int) map[string]int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		fail(err)
	}
	out := map[string]int64{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || !strings.HasSuffix(v, " kB") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, " kB")), 10, 64)
		if err != nil {
			fail(fmt.Errorf("%s: %q: %w", k, v, err))
		}
		out[k] = n
	}
	return out
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// timeToHello measures from spawn to the first stdout line.
func timeToHello(bin, dir string, extra ...string) time.Duration {
	d, _ := firstLine(bin, dir, env(dir), extra...)
	return d
}

// firstLine starts the server (the fake model, no session file, extra
// flags) in dir with environ and returns the time from spawn to its first
// stdout line (hello) and the line; then it closes stdin and waits for
// the server to end.
func firstLine(bin, dir string, environ []string, extra ...string) (time.Duration, string) {
	cmd := exec.Command(bin, append([]string{"--model", "fake/echo", "--no-session"}, extra...)...)
	cmd.Env = environ
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	if err != nil {
		fail(err)
	}
	d := time.Since(start)
	stdin.Close()
	_, _ = io.Copy(io.Discard, br)
	_ = cmd.Wait()
	return d, line
}

func writeScript(path string, n int) {
	text := make([]byte, n)
	for i := range text {
		text[i] = 'a' + byte(i%26)
	}
	b, _ := json.Marshal(map[string]any{"version": 1, "responses": []any{map[string]any{
		"steps": []any{map[string]any{"text": string(text), "chunkSize": 1}},
		"usage": map[string]int{"input": 10, "output": n / 4},
	}}})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		fail(err)
	}
}

type result struct {
	settle       time.Duration
	bytes, lines int
	deltas       int
	maxRSS       int64         // KiB
	cpu          time.Duration // user + system
}

// reply sends one prompt and reads until agent_settled.
func reply(bin, dir, script string) result {
	cmd := exec.Command(bin, "--model", "fake/echo", "--no-session")
	cmd.Env = append(env(dir), "AMA_FAKE_SCRIPT="+script)
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	if _, err := io.WriteString(stdin, `{"id":"1","type":"prompt","message":"bench"}`+"\n"); err != nil {
		fail(err)
	}
	var r result
	br := bufio.NewReaderSize(stdout, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			rest, err2 := br.ReadBytes('\n')
			line = append(append([]byte(nil), line...), rest...)
			err = err2
		}
		if err != nil {
			fail(fmt.Errorf("stdout ended before agent_settled: %v", err))
		}
		r.bytes += len(line)
		r.lines++
		if bytes.Contains(line, []byte(`"type":"message_update"`)) && bytes.Contains(line, []byte(`_delta"`)) {
			var v struct {
				E struct{ Delta string } `json:"assistantMessageEvent"`
			}
			if json.Unmarshal(line, &v) == nil {
				r.deltas += len(v.E.Delta)
			}
		}
		if bytes.HasPrefix(line, []byte(`{"type":"agent_settled"`)) {
			break
		}
	}
	r.settle = time.Since(start)
	stdin.Close()
	_, _ = io.Copy(io.Discard, br)
	if err := cmd.Wait(); err != nil {
		fail(err)
	}
	r.usage(cmd)
	return r
}

func median[T cmp.Ordered](d []T) T {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func minOf(d []time.Duration) time.Duration {
	m := d[0]
	for _, x := range d {
		m = min(m, x)
	}
	return m
}

func maxOf(d []time.Duration) time.Duration {
	m := d[0]
	for _, x := range d {
		m = max(m, x)
	}
	return m
}

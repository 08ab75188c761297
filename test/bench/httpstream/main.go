// Command httpstream measures the OpenAI-compatible adapter against curl
// on the same loopback stream: the bench mock (../shared/bench/mock_openai.py)
// streams an N-delta reply; each round fetches it once with curl to
// /dev/null and once through openai.Provider.Stream (events consumed,
// the reply assembled), in alternating order, and reports the medians and
// the median of the per-round ratios (wall time and client CPU).
//
//	go run ./test/bench/httpstream [-deltas 100000] [-runs 7] [-mock ../shared/bench/mock_openai.py]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/llm/openai"
)

func main() {
	deltas := flag.Int("deltas", 100_000, "deltas of the reply")
	runs := flag.Int("runs", 7, "rounds (medians are reported)")
	mock := flag.String("mock", "../shared/bench/mock_openai.py", "the bench mock server")
	flag.Parse()
	curl, err := exec.LookPath("curl")
	if err != nil {
		fmt.Fprintf(os.Stderr, "httpstream: skipped, no curl (%v)\n", err)
		return
	}
	if _, err := os.Stat(*mock); err != nil {
		fmt.Fprintf(os.Stderr, "httpstream: skipped, no mock server (%v)\n", err)
		return
	}
	port := freePort()
	srv := exec.Command("python3", *mock, strconv.Itoa(port))
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		fail(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	waitListening(port)
	base := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	prompt := fmt.Sprintf("bench:%d", *deltas)
	body := fmt.Sprintf(`{"model":"mock","stream":true,"messages":[{"role":"user","content":%q}]}`, prompt)

	p := openai.New(openai.Options{ID: "mock", BaseURL: base, HTTPClient: &http.Client{}})
	req := &llm.Request{Model: &llm.Model{Provider: "mock", ID: "mock", API: openai.API, ContextWindow: 1 << 20,
		MaxTokens: 1 << 20}, Messages: []llm.Message{llm.NewUser(prompt, 1, "")}, ThinkingLevel: "off"}

	runCurl := func() (wall, cpu time.Duration) {
		cmd := exec.Command(curl, "-sS", "-N", "-o", "/dev/null", "-H", "Content-Type: application/json",
			"--data-binary", body, base+"/chat/completions")
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			fail(fmt.Errorf("curl: %v: %s", err, out))
		}
		wall = time.Since(start)
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	runOurs := func() (wall, cpu time.Duration) {
		n := 0
		emit := func(ev llm.StreamEvent, _ *llm.AssistantMessage) {
			if ev.Type == llm.EvTextDelta {
				n++
			}
		}
		c0 := selfCPU()
		start := time.Now()
		msg, err := p.Stream(context.Background(), req, emit)
		wall = time.Since(start)
		cpu = selfCPU() - c0
		if err != nil {
			fail(err)
		}
		if n != *deltas || msg.Usage.Output != *deltas {
			fail(fmt.Errorf("adapter saw %d deltas, usage %d (want %d)", n, msg.Usage.Output, *deltas))
		}
		return wall, cpu
	}
	runCurl() // warm both up
	runOurs()
	var cw, cc, ow, oc, rw, rc []float64
	for i := range *runs {
		var a, b, x, y time.Duration
		if i%2 == 0 {
			a, b = runCurl()
			x, y = runOurs()
		} else {
			x, y = runOurs()
			a, b = runCurl()
		}
		cw, cc, ow, oc = append(cw, ms(a)), append(cc, ms(b)), append(ow, ms(x)), append(oc, ms(y))
		rw, rc = append(rw, ms(x)/ms(a)), append(rc, ms(y)/max(ms(b), 0.001))
	}
	fmt.Printf("HTTP stream, %d deltas (n=%d, medians):\n", *deltas, *runs)
	fmt.Printf("  %-28s wall %8.1f ms   cpu %7.1f ms\n", "curl -o /dev/null", median(cw), median(cc))
	fmt.Printf("  %-28s wall %8.1f ms   cpu %7.1f ms\n", "openai adapter (Stream)", median(ow), median(oc))
	fmt.Printf("  %-28s wall %8.2fx     cpu %7.2fx\n", "adapter / curl (paired)", median(rw), median(rc))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening polls until the mock accepts connections (it is a
// separate process with no readiness signal other than its port).
func waitListening(port int) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	fail(fmt.Errorf("mock server did not listen on %d", port))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "httpstream:", err)
	os.Exit(1)
}

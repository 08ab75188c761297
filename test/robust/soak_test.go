package robust_test

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The soak: 12 sessions (one process each, four at a time) of prompts,
// approvals (allowed and denied), aborts, hosts that stop reading for a
// while, state queries and an end by SIGTERM, SIGINT or stdin EOF, against
// the built binary and the fake model. It checks that every command id is
// answered exactly once, that every process exits in time with the right
// code, that every line is valid UTF-8 JSON and that peak RSS stays
// bounded. The 12 sessions of 16 rounds start at each of the 8 places in
// the cycle of round kinds (n%8) and end each of the 3 ways (n%3) four
// times; every kind comes up at least twice a session (it was 20
// sessions of 32 rounds: 11-12 CPU-s of make test for the same mixes
// repeated). -short skips it.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: about a minute")
	}
	const (
		sessions = 12
		parallel = 4
		rounds   = 16
		rssBound = 150e6
	)
	type result struct {
		commands, lines, approvals int
		peak                       int64
		exit                       int
		exitTook                   time.Duration
		took                       time.Duration
	}
	results := make([]result, sessions)
	t0 := time.Now()
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := 0; i < sessions; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(fmt.Sprintf("session%02d", i), func(t *testing.T) {
				r := soakSession(t, i, rounds)
				results[i] = result{commands: r.commands, lines: r.lines, approvals: r.approvals, peak: r.peak, exit: r.exit, exitTook: r.exitTook, took: r.took}
				if r.peak > rssBound {
					t.Errorf("peak RSS %.0f MB > %.0f MB", float64(r.peak)/1e6, rssBound/1e6)
				}
			})
		}(i)
	}
	wg.Wait()
	var cmds, lines, approvals int
	var peak int64
	var slowestExit, slowest time.Duration
	codes := map[int]int{}
	for _, r := range results {
		cmds += r.commands
		lines += r.lines
		approvals += r.approvals
		peak = max(peak, r.peak)
		slowestExit = max(slowestExit, r.exitTook)
		slowest = max(slowest, r.took)
		codes[r.exit]++
	}
	t.Logf("soak: %d sessions x %d rounds in %s: %d commands (%d permission answers), each answered once; %d stdout lines; exits %v (slowest exit %s, slowest session %s); peak RSS %.1f MB",
		sessions, rounds, time.Since(t0).Round(time.Millisecond), cmds, approvals, lines, codes, slowestExit.Round(time.Millisecond), slowest.Round(time.Millisecond), float64(peak)/1e6)
}

type soakResult struct {
	commands, lines, approvals int
	peak                       int64
	exit                       int
	exitTook, took             time.Duration
}

// soakSession drives one process through rounds of mixed work and its end.
func soakSession(t *testing.T, n, rounds int) soakResult {
	t0 := time.Now()
	kinds := []string{"plain", "approve", "abort", "stall", "plain", "approve", "queries", "abort"}
	var responses []string
	for r := 0; r < rounds; r++ {
		switch kinds[(r+n)%len(kinds)] {
		case "plain", "queries":
			responses = append(responses, fmt.Sprintf(`{"steps":[{"text":%q,"chunkSize":3}]}`, strings.Repeat("soak ", 60)))
		case "approve":
			responses = append(responses,
				fmt.Sprintf(`{"steps":[{"toolCall":{"name":"write","arguments":{"path":"f%d.txt","content":"x\n"}}}]}`, r),
				`{"text":"done"}`)
		case "abort":
			responses = append(responses, `{"steps":[{"text":"a"},{"delayMs":30000},{"text":"b"}]}`)
		case "stall":
			responses = append(responses, fmt.Sprintf(`{"steps":[{"text":%q,"chunkSize":1}]}`, strings.Repeat("z", 5000)))
		}
	}
	responses = append(responses, `{"steps":[{"text":"last"},{"delayMs":30000},{"text":"never"}]}`)
	script := `{"version":1,"responses":[` + strings.Join(responses, ",") + `],"whenExhausted":"repeat-last"}`
	p := start(t, procConfig{script: script, approve: true, env: []string{"AMA_APPROVAL_TIMEOUT_MS=10000"}})
	const wait = 30 * time.Second
	seq := 0
	cmd := func(typ, extra string) string {
		seq++
		id := fmt.Sprintf("c%d", seq)
		p.sendID(id, fmt.Sprintf(`{"id":%q,"type":%q%s}`, id, typ, extra))
		return id
	}
	cmd("set_client_capabilities", `,"capabilities":["approvals"]`)
	settledCount := 0
	waitSettled := func() {
		settledCount++
		p.waitFor("agent_settled", wait, settled(p, settledCount))
	}
	for r := 0; r < rounds; r++ {
		switch kinds[(r+n)%len(kinds)] {
		case "plain":
			cmd("prompt", fmt.Sprintf(`,"message":"round %d"`, r))
			waitSettled()
		case "approve": // the collector answers allow and deny in turn
			cmd("prompt", `,"message":"write a file"`)
			waitSettled()
		case "abort":
			from := p.mark()
			cmd("prompt", `,"message":"long"`)
			p.waitAfter(from, "message_update", wait, event("message_update"))
			cmd("abort", "")
			waitSettled()
		case "stall": // the host stops reading while a reply streams
			p.pause()
			cmd("prompt", `,"message":"stream"`)
			for k := 0; k < 20; k++ {
				cmd("get_state", "")
			}
			waitBlocked(t, p)
			p.resume()
			waitSettled()
		case "queries":
			cmd("prompt", `,"message":"q"`)
			for _, q := range []string{"get_state", "get_messages", "get_entries", "get_tree", "get_session_stats", "get_last_assistant_text"} {
				cmd(q, "")
			}
			waitSettled()
		}
	}
	// The end: a signal mid-run, or stdin EOF after a finished run.
	var want int
	from := p.mark()
	last := cmd("prompt", `,"message":"last"`)
	p.waitFor("the last prompt's response", wait, response(last))
	switch n % 3 {
	case 0, 1:
		p.waitAfter(from, "message_update", wait, event("message_update"))
		sig := syscall.SIGTERM
		if n%3 == 1 {
			sig = syscall.SIGINT
		}
		want = 128 + int(sig)
		peak := p.peakRSS()
		p.signal(sig)
		return p.soakEnd(t, want, peak, t0)
	default:
		p.waitAfter(from, "message_update", wait, event("message_update"))
		cmd("abort", "")
		waitSettled()
		peak := p.peakRSS()
		_ = p.stdin.Close()
		return p.soakEnd(t, 0, peak, t0)
	}
}

func (p *proc) soakEnd(t *testing.T, want int, peak int64, t0 time.Time) soakResult {
	code, took := p.wait(15 * time.Second)
	if code != want {
		t.Errorf("exit %d after %s, want %d; stderr:\n%s", code, took, want, p.stderrText())
	}
	if took > 7*time.Second {
		t.Errorf("exit took %s", took)
	}
	// The process has exited: what it wrote is read once the collector
	// reaches EOF.
	p.waitEOF(10 * time.Second)
	p.mu.Lock()
	defer p.mu.Unlock()
	answered := map[string]int{}
	for _, d := range p.decoded {
		if d.Type == "response" && d.ID != "" {
			answered[d.ID]++
		}
	}
	for _, id := range p.sent {
		if answered[id] != 1 {
			t.Errorf("command %s answered %d times", id, answered[id])
		}
	}
	if len(answered) != len(p.sent) {
		t.Errorf("%d ids answered, %d sent", len(answered), len(p.sent))
	}
	if len(p.bad) > 0 {
		t.Errorf("%d lines are not valid UTF-8 JSON, first %s", len(p.bad), p.bad[0])
	}
	if p.approvals == 0 {
		t.Errorf("no permission request was seen")
	}
	return soakResult{commands: len(p.sent), lines: len(p.lines), approvals: p.approvals, peak: peak, exit: code, exitTook: took, took: time.Since(t0)}
}

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// acpNew prints the latency of ACP session/new with sessions persisted
// (issue 37 §3: the new session's file is created, and made durable,
// before the answer): one process, n session/new requests one after the
// other, each timed from its write to its answer; next to the same with
// --no-session (no file: the cost of everything else). The two processes
// alternate in rounds of 10 requests so both see the same machine load.
func acpNew(bin, dir string, n int) {
	var durable, none []time.Duration
	for done := 0; done < n; done += 10 {
		durable = append(durable, acpNewRound(bin, dir, min(10, n-done))...)
		none = append(none, acpNewRound(bin, dir, min(10, n-done), "--no-session")...)
	}
	row := func(name string, took []time.Duration) {
		fmt.Printf("%-28s %10s   (n=%d, min %s, max %s)\n", name,
			median(took).Round(10*time.Microsecond), len(took), minOf(took).Round(10*time.Microsecond), maxOf(took).Round(10*time.Microsecond))
	}
	row("ACP session/new", durable)
	row("  --no-session (no file)", none)
}

func acpNewRound(bin, dir string, n int, extra ...string) []time.Duration {
	cmd := exec.Command(bin, append([]string{"--mode", "acp", "--model", "fake/echo"}, extra...)...)
	cmd.Env = env(dir)
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	br := bufio.NewReaderSize(stdout, 1<<20)
	await := func(id string) {
		want := []byte(fmt.Sprintf(`"id":%q`, id))
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				fail(fmt.Errorf("stdout ended before the answer to %s: %v", id, err))
			}
			if bytes.Contains(line, want) {
				if bytes.Contains(line, []byte(`"error"`)) {
					fail(fmt.Errorf("%s: %s", id, line))
				}
				return
			}
		}
	}
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			fail(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	await("init")
	var took []time.Duration
	for i := range n {
		id := fmt.Sprintf("new%d", i)
		start := time.Now()
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, id, dir))
		await(id)
		took = append(took, time.Since(start))
	}
	stdin.Close()
	_, _ = io.Copy(io.Discard, br)
	if err := cmd.Wait(); err != nil {
		fail(err)
	}
	return took
}

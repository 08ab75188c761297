package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// compareModes prints the ACP vs rpc row: one n-delta fake reply served by
// `--mode rpc` and by `--mode acp`, the two modes alternated in each round
// so both see the same machine load; the ratios are paired per round and
// the median is reported, with the time from spawn to the settled reply
// (agent_settled, or the session/prompt answer), the CPU time of the
// process (user+system) and the stdout bytes.
func compareModes(bin, dir string, n, runs int) {
	script := fmt.Sprintf("%s/script-modes-%d.json", dir, n)
	writeScript(script, n)
	var rpcT, acpT, rpcC, acpC, tRatio, cRatio []time.Duration
	var rpcR, acpR result
	for i := 0; i < runs; i++ {
		rpcR = reply(bin, dir, script)
		acpR = replyACP(bin, dir, script)
		for _, r := range []result{rpcR, acpR} {
			if r.deltas != n {
				fail(fmt.Errorf("%d-delta reply: rebuilt %d delta characters", n, r.deltas))
			}
		}
		rpcT, acpT = append(rpcT, rpcR.settle), append(acpT, acpR.settle)
		rpcC, acpC = append(rpcC, rpcR.cpu), append(acpC, acpR.cpu)
		// Ratios as durations in thousandths, so median() sorts them.
		tRatio = append(tRatio, time.Duration(1000*float64(acpR.settle)/float64(rpcR.settle)))
		cRatio = append(cRatio, time.Duration(1000*float64(acpR.cpu)/float64(max(rpcR.cpu, 1))))
	}
	row := func(mode string, t, c []time.Duration, r result) {
		fmt.Printf("%-28s %10s   cpu %s, stdout %d bytes, %d lines\n", fmt.Sprintf("%d-delta reply, %s", n, mode),
			median(t).Round(100*time.Microsecond), median(c).Round(100*time.Microsecond), r.bytes, r.lines)
	}
	row("--mode rpc", rpcT, rpcC, rpcR)
	row("--mode acp", acpT, acpC, acpR)
	fmt.Printf("%-28s %10s   cpu %.2fx, bytes %.2fx (median of %d paired rounds; target 1.5x)\n", "  acp / rpc",
		fmt.Sprintf("%.2fx", float64(median(tRatio))/1000), float64(median(cRatio))/1000,
		float64(acpR.bytes)/float64(rpcR.bytes), runs)
}

// replyACP opens one ACP session, sends one prompt and reads until its
// answer; deltas counts the text of the agent_message_chunk updates.
func replyACP(bin, dir, script string) result {
	cmd := exec.Command(bin, "--mode", "acp", "--model", "fake/echo", "--no-session")
	cmd.Env = append(env(dir), "AMA_FAKE_SCRIPT="+script)
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			fail(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
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
			fail(fmt.Errorf("stdout ended before the prompt answer: %v", err))
		}
		r.bytes += len(line)
		r.lines++
		if bytes.Contains(line, []byte(`"agent_message_chunk"`)) {
			var v struct {
				Params struct {
					Update struct {
						Content struct{ Text string }
					}
				}
			}
			if json.Unmarshal(line, &v) == nil {
				r.deltas += len(v.Params.Update.Content.Text)
			}
			continue
		}
		if bytes.Contains(line, []byte(`"id":"new"`)) {
			var v struct {
				Result struct {
					SessionID string `json:"sessionId"`
				}
			}
			if json.Unmarshal(line, &v) != nil || v.Result.SessionID == "" {
				fail(fmt.Errorf("session/new: %s", line))
			}
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"bench"}]}}`, v.Result.SessionID))
		}
		if bytes.Contains(line, []byte(`"id":"p"`)) {
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

// usage records peak RSS and CPU time of the exited process.
func (r *result) usage(cmd *exec.Cmd) {
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = int64(ru.Maxrss) // int32 on 32-bit systems
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

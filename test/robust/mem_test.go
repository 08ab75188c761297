package robust_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

const mib = 1 << 20

// okScript answers every request with a short text.
const okScript = `{"version":1,"responses":[{"text":"ok"}],"whenExhausted":"repeat-last"}`

// bigLine is a command line of about size bytes: a prefix, size bytes of
// filler, a suffix.
func bigLine(prefix string, size int, suffix string) []byte {
	var b bytes.Buffer
	b.Grow(len(prefix) + size + len(suffix) + 1)
	b.WriteString(prefix)
	b.Write(bytes.Repeat([]byte("a"), size))
	b.WriteString(suffix)
	b.WriteByte('\n')
	return b.Bytes()
}

func (p *proc) sendBytes(b []byte) {
	p.t.Helper()
	if _, err := p.stdin.Write(b); err != nil {
		p.t.Fatalf("write stdin: %v", err)
	}
}

// rssLimit is the target: 4x the largest accepted line plus 30 MB.
func rssLimit(largest int) int64 { return 4*int64(largest) + 30e6 }

// finish reads the child's peak RSS, closes stdin and waits for exit 0.
func finish(t *testing.T, p *proc) int64 {
	t.Helper()
	peak := p.peakRSS()
	_ = p.stdin.Close()
	if code, _ := p.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderrText())
	}
	return peak
}

func settled(p *proc, n int) func(line) bool {
	count := 0
	return func(l line) bool {
		if l.Type == "agent_settled" {
			count++
		}
		return count >= n
	}
}

// Three 40 MiB prompts in a row: peak RSS under the target for the
// largest line (4x + 30 MB), and the history does not stay in the heap:
// each huge entry moves to a mapped blob file once it is on disk
// (store/spill.go), so the third prompt costs what the first did (a
// history kept in the heap adds 80 MB, over the guard). The first prompt
// alone is the one-huge-prompt case of issue 12 (measured with 50 MiB
// before: 188-192 MB idle, 205-229 MB with a slow reader under -race;
// 940 MB originally). The big lines (message_start, message_end,
// before_agent_start, entry_appended) are each built once in an exact
// buffer, and only once the previous one is out (Writer.WaitRoom); the
// session file gets the entry's body as is; the cached message shares the
// body's bytes (store/share.go); sizes are counted without encoding;
// internal/memlimit keeps the GC's pace. The text either needs no JSON
// escapes (the body's string is the text) or does, as any pasted file
// with newlines does (the text is a copy of its own, moved too). make
// test runs these without -race (the child is built without it; the
// harness's instrumented checks of 40 MiB lines only cost time).
func TestMemoryOfThreeBigPrompts(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 360 MiB through the server")
	}
	t.Parallel() // see memParallel
	const text = `{"id":"p%d","type":"prompt","message":"`
	const image = `{"id":"p%d","type":"prompt","message":"look","images":[{"type":"image","mimeType":"image/png","data":"`
	for _, tc := range []struct{ name, prefix, filler, suffix, member string }{
		{"plain", text, "a", `"}`, `"content":"`},
		{"escaped", text, `abc\n`, `"}`, `"content":"`}, // 6 bytes of JSON, 4 of text
		{"image", image, "QUJD", `"}]}`, `"data":"`},    // one 40 MiB image each
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := start(t, procConfig{script: okScript, env: []string{os.Getenv("AMA_ROBUST_CHILD_ENV")}, dropHuge: true}) // e.g. GODEBUG=gctrace=1
			prompt := numbered(fillLine(fmt.Sprintf(tc.prefix, 0), tc.filler, 40*mib, tc.suffix))
			var size int
			for i := 0; i < 3; i++ {
				line := prompt(i)
				size = len(line)
				p.sendBytes(line)
				p.waitFor("agent_settled", 60*time.Second, settled(p, i+1))
				t.Logf("after prompt %d: RSS %.0f MB (file pages %.0f MB)", i+1, float64(p.vmRSS())/1e6, float64(p.procStatus("RssFile"))/1e6)
			}
			peak := p.peakRSS()
			t.Logf("peak RSS after the prompts %.0f MB", float64(peak)/1e6)
			// The moved history reads back as it was sent: the entries
			// hold each prompt's JSON string as the line had it (the
			// context itself has been compacted by now).
			p.send(`{"id":"m","type":"get_entries"}`)
			p.waitFor("get_entries", 60*time.Second, response("m"))
			text := append(bytes.Repeat([]byte(tc.filler), 40*mib/len(tc.filler)), '"')
			p.mu.Lock()
			for i, d := range p.decoded {
				if d.Type == "response" && d.ID == "m" {
					if n := countStrings(p.lines[i], []byte(tc.member), text); n != 3 {
						t.Errorf("get_entries holds %d of the 3 prompts", n)
					}
				}
			}
			p.mu.Unlock()
			finish(t, p)
			if os.Getenv("AMA_ROBUST_CHILD_ENV") != "" {
				t.Log(p.stderrText())
			}
			// Three images (issue 28 §2, 10 runs, load 24-37): 155-197 MB,
			// median 155, once their data stayed the line's bytes
			// (internal/jsonlit); 196-197 MB before (a copy of each).
			// Measured (four prompts): plain 157-190 MB, escaped
			// 162-179 MB, with a 198 MB target (before the blob file: 292-293 MB and
			// 405-430 MB; 1.9 GB in the issue). The guard allows 10%
			// over the target for a loaded machine or -race.
			limit := rssLimit(size) * 11 / 10
			t.Logf("three %d-byte prompts: peak RSS %.0f MB (guard %.0f MB; issue target %.0f MB)", size, float64(peak)/1e6, float64(limit)/1e6, float64(rssLimit(size))/1e6)
			if peak > limit {
				t.Errorf("peak RSS %d > %d", peak, limit)
			}
		})
	}
}

// countStrings counts the places where b holds member directly followed
// by text: bytes.Count of the joined token, without building it or running
// bytes.Count's rolling hash over the whole line for a 40 MiB needle (a
// second of the harness's CPU per get_entries).
func countStrings(b, member, text []byte) int {
	n := 0
	for {
		i := bytes.Index(b, member)
		if i < 0 {
			return n
		}
		b = b[i+len(member):]
		if bytes.HasPrefix(b, text) {
			n++
			b = b[len(text):]
		}
	}
}

// fillLine is bigLine with size bytes of filler repeated.
func fillLine(prefix, filler string, size int, suffix string) []byte {
	var b bytes.Buffer
	b.Grow(len(prefix) + size + len(suffix) + 1)
	b.WriteString(prefix)
	b.WriteString(strings.Repeat(filler, size/len(filler)))
	b.WriteString(suffix)
	b.WriteByte('\n')
	return b.Bytes()
}

// numbered returns line (which holds the id "p0") with that id numbered
// i (0-9), in place: a 40 MiB line is built once per test, not once per
// prompt (sendBytes returns once the pipe has taken the bytes).
func numbered(line []byte) func(i int) []byte {
	at := bytes.Index(line, []byte(`"p0"`)) + 2
	return func(i int) []byte {
		line[at] = byte('0' + i)
		return line
	}
}

// A rejected 100 MiB line costs at most the line bound, and the reader's
// buffer is released afterwards.
func TestMemoryOfARejectedLine(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 100 MiB through the server")
	}
	t.Parallel() // see memParallel
	p := start(t, procConfig{script: okScript})
	p.waitFor("session_start", 20*time.Second, event("session_start"))
	base := p.vmRSS()
	go func() {
		_, _ = io.Copy(p.stdin, bytes.NewReader(bigLine(`{"id":"big","type":"prompt","message":"`, 100*mib, `"}`)))
		_, _ = io.WriteString(p.stdin, `{"id":"after","type":"get_state"}`+"\n")
	}()
	l := p.waitFor("the parse error", 60*time.Second, func(l line) bool { return l.Command == "parse" })
	if l.Success {
		t.Fatal("the oversized line was accepted")
	}
	p.waitFor("the next response", 60*time.Second, response("after"))
	// The Go runtime returns freed memory to the OS lazily; the reader
	// must at least not hold on to its buffer (measured as the RSS a few
	// seconds later, the scavenger's pace).
	var after int64
	deadline := time.Now().Add(10 * time.Second)
	for tick := time.NewTicker(250 * time.Millisecond); ; <-tick.C {
		after = p.vmRSS()
		if after < base+20e6 || time.Now().After(deadline) {
			tick.Stop()
			break
		}
	}
	peak := finish(t, p)
	t.Logf("rejected 100 MiB line: peak RSS %.0f MB, RSS %.0f MB before and %.0f MB after", float64(peak)/1e6, float64(base)/1e6, float64(after)/1e6)
	if after > base+20e6 {
		t.Errorf("RSS after the rejected line %d, before %d: the buffer is kept", after, base)
	}
	if peak > rssLimit(64*mib) {
		t.Errorf("peak RSS %d > %d", peak, rssLimit(64*mib))
	}
}

// An id longer than 1 KiB is refused with invalid_arguments, and a 60 MiB
// one costs no more than any line of its size.
func TestMemoryOfAHugeID(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 60 MiB through the server")
	}
	t.Parallel() // see memParallel
	p := start(t, procConfig{script: okScript})
	line := bigLine(`{"type":"get_state","id":"`, 60*mib, `"}`)
	p.sendBytes(line)
	p.send(`{"id":"` + strings.Repeat("k", 1025) + `","type":"get_state"}`)
	p.send(`{"id":"` + strings.Repeat("k", 1024) + `","type":"get_state"}`)
	p.send(`{"id":"after","type":"get_state"}`)
	p.waitFor("the next response", 60*time.Second, response("after"))
	var codes []string
	p.mu.Lock()
	for _, d := range p.decoded {
		if d.Type == "response" && d.ID != "after" {
			codes = append(codes, fmt.Sprintf("%d:%v:%s", len(d.ID), d.Success, d.Code))
		}
	}
	p.mu.Unlock()
	peak := finish(t, p)
	t.Logf("60 MiB id: peak RSS %.0f MB (limit %.0f MB); responses %v", float64(peak)/1e6, float64(rssLimit(len(line)))/1e6, codes)
	// The long ids are not echoed: the error response has no id.
	want := []string{"0:false:invalid_arguments", "0:false:invalid_arguments", "1024:true:"}
	if fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Errorf("responses %v, want %v", codes, want)
	}
	if peak > rssLimit(len(line)) {
		t.Errorf("peak RSS %d > %d", peak, rssLimit(len(line)))
	}
}

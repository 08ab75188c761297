package rpc

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/events"
	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/llm"
)

// BenchmarkWriterDelta measures the hot path of streaming: one text delta
// enqueued and written as a message_update line.
func BenchmarkWriterDelta(b *testing.B) {
	w := stdio.NewWriter(io.Discard, stdio.WriterOptions{DeltaLine: appendDeltaLine})
	u := &llm.Usage{}
	b.ReportAllocs()
	for b.Loop() {
		w.SendDelta("text_delta", 0, "tok ", u)
	}
	w.Close()
}

// BenchmarkWriterEvent measures one generic event line (reflection-based
// encoding).
func BenchmarkWriterEvent(b *testing.B) {
	w := stdio.NewWriter(io.Discard, stdio.WriterOptions{})
	ev := Response{Type: "response", Command: "get_state", Success: true, Data: map[string]any{"isStreaming": false}}
	b.ReportAllocs()
	for b.Loop() {
		w.Send(ev)
	}
	w.Close()
}

// BenchmarkReplay100k compares replay{sinceSeq} of 100k numbered event
// lines with writing them (issue 35: replay ≤ 1.3× the write). write:
// 100k events through forward's path (encode, queue, number, keep in the
// ring, write); replay: the replay answer of all of them (the fill the
// writer goroutine runs). Both end when the writer has written the last
// line. Reported per 100k lines: unnumbered-ms (the same lines without
// event_seq), write-ms, replay-ms and replay/write.
func BenchmarkReplay100k(b *testing.B) {
	const n = 100_000
	evs := make([]events.Event, 0, 4)
	evs = append(evs,
		events.MessageUpdate{AssistantMessageEvent: llm.StreamEvent{Type: llm.EvTextDelta, ContentIndex: 0, Delta: "a streamed token "}},
		events.ToolExecutionUpdate{ToolCallID: "call_1", ToolName: "bash", Partial: "line of output from a command\n"},
		events.MessageUpdate{AssistantMessageEvent: llm.StreamEvent{Type: llm.EvTextDelta, ContentIndex: 1, Delta: "another token "}},
		events.TurnStart{},
	)
	s := &Server{log: zap.NewNop(), opts: Options{Broker: NewBroker()}}
	var write, replay, plain time.Duration
	b.ReportAllocs()
	for b.Loop() {
		// The same lines unnumbered (today's clients), for the cost of
		// numbering and keeping.
		s.w = stdio.NewWriter(io.Discard, stdio.WriterOptions{DeltaLine: appendDeltaLine})
		tp := time.Now()
		for i := 0; i < n; i++ {
			sendEventSeq(s.w, s.log, evs[i%len(evs)], nil)
		}
		s.w.Flush()
		plain += time.Since(tp)
		s.w.Close()

		s.w = stdio.NewWriter(io.Discard, stdio.WriterOptions{DeltaLine: appendDeltaLine})
		q := stdio.NewSeq(0, stdio.SeqOptions{Stamp: stampRPC, Ring: stdio.RingOptions{MaxLines: n, MaxBytes: 256 << 20}})
		t0 := time.Now()
		for i := 0; i < n; i++ {
			sendEventSeq(s.w, s.log, evs[i%len(evs)], q)
		}
		s.w.Flush()
		t1 := time.Now()
		id := "r"
		s.w.SendPieces(1, s.replayFill(&command{id: &id, name: "replay"}, q, 0, replaySnapshot{Status: statusIdle}))
		s.w.Flush()
		t2 := time.Now()
		write += t1.Sub(t0)
		replay += t2.Sub(t1)
		if st := s.w.Stats(); st.Lines != n+1 {
			b.Fatalf("wrote %d lines, want %d (deltas merged?)", st.Lines, n+1)
		}
		s.w.Close()
	}
	b.ReportMetric(float64(plain.Milliseconds())/float64(b.N), "unnumbered-ms")
	b.ReportMetric(float64(write.Milliseconds())/float64(b.N), "write-ms")
	b.ReportMetric(float64(replay.Milliseconds())/float64(b.N), "replay-ms")
	b.ReportMetric(float64(replay)/float64(write), "replay/write")
}

// benchLines is a stream of n small commands, as a host sends them.
func benchLines(n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			b = fmt.Appendf(b, `{"id":"g%d","type":"get_state"}`+"\n", i)
		} else {
			b = fmt.Appendf(b, `{"id":"p%d","type":"prompt","message":"fix the failing test in rpc/server.go","streamingBehavior":"steer"}`+"\n", i)
		}
	}
	return b
}

// decodeLine is the input path of one line up to its handler: the
// envelope (parseCommand) and the params the handler gets.
func decodeLine(b *testing.B, line []byte) {
	c, perr := parseCommand(line)
	if perr != "" {
		b.Fatal(perr)
	}
	if c.name == "get_state" {
		var p none
		if err := params(c, &p); err != nil {
			b.Fatal(err)
		}
		return
	}
	var p promptParams
	if err := params(c, &p); err != nil || p.Message.Text() == "" {
		b.Fatal(err)
	}
}

// BenchmarkSmallCommands measures the input path of small commands: a
// stream of 10k read by the line reader, each parsed and its params
// decoded. Reported per command.
func BenchmarkSmallCommands(b *testing.B) {
	const n = 10_000
	in := benchLines(n)
	b.SetBytes(int64(len(in) / n))
	b.ReportAllocs()
	for b.Loop() {
		lr := stdio.NewLineReader(bytes.NewReader(in), 0)
		for {
			line, err := lr.Next()
			if err != nil {
				break
			}
			decodeLine(b, lr.Take(line))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/command")
}

// BenchmarkPromptLine40MiB measures the decode of one 40 MiB prompt line
// (parsed, its message decoded in place), the line as the reader hands it
// over (the reader itself is left out: its copy is the framing, and its
// memory limit for a huge line, internal/memlimit, would pace the loop).
func BenchmarkPromptLine40MiB(b *testing.B) {
	line := append([]byte(`{"id":"p","type":"prompt","message":"`), bytes.Repeat([]byte("a"), 40<<20)...)
	line = append(line, `"}`...)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		decodeLine(b, line)
	}
}

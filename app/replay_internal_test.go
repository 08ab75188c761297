package app

import (
	"bytes"
	"testing"
)

// logRecords reads any bytes without panicking: every non-blank line is a
// record of its session or a bad line, and nothing is found for sessions
// that are not there.
func FuzzLogRecords(f *testing.F) {
	f.Add([]byte(`{"v":1,"sessionId":"s","toolCallId":"a","votes":[{"layer":"rule","vote":"allow"}],"effect":"allow"}` + "\n"))
	f.Add([]byte("{\"v\":1,\"sessionId\":\"s\"}\n\n  \nnot json\n{\"v\":0}\n"))
	f.Add([]byte(`{"v":1,"sessionId":"s","votes":null,"shape":{"tool":"bash","paths":[1]}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		sessions, bad, err := logRecords(b, dir)
		if err != nil {
			return
		}
		n := 0
		for _, s := range sessions {
			if !s.missing {
				t.Fatalf("session %q found in an empty directory", s.id)
			}
			n += len(s.calls)
		}
		lines := 0
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if n+bad != lines {
			t.Fatalf("%d records + %d bad lines, %d lines", n, bad, lines)
		}
	})
}

package store

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/llm"
)

// BenchmarkCreateSteps is where a new session's file creation (ACP
// session/new: header, settings, system prompt) spends its time, step by
// step, in the order createDirect takes them; each step's wall time is
// reported as <step>-us/op. "syncs" is the two fsyncs as Create does them
// (file and directory at once); the sequential rows show each alone.
func BenchmarkCreateSteps(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "s")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	p := "e2"
	entries := []*Entry{ModelChangeEntry("fake", "echo", ""), ThinkingLevelEntry("medium"), MessageEntry(&llm.SystemMessage{Role: llm.RoleSystem})}
	entries[0].ID, entries[1].ID, entries[2].ID = "e1", "e2", "e3"
	entries[1].ParentID, entries[2].ParentID = &entries[0].ID, &p
	h := NewHeader("create", time.Unix(0, 0), "/work/proj", "bench")
	buf := h.appendJSON(nil)
	buf = append(buf, '\n')
	for _, e := range entries {
		buf = append(e.AppendJSON(buf), '\n')
	}
	steps := []string{"mkdir", "lstat", "lock", "open-write", "fsync-file", "fsync-dir", "syncs"}
	sum := make([]time.Duration, len(steps))
	i := 0
	for b.Loop() {
		i++
		path := filepath.Join(dir, fmt.Sprintf("%d.jsonl", i))
		t := time.Now()
		lap := func(k int) {
			now := time.Now()
			sum[k] += now.Sub(t)
			t = now
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		lap(0)
		exists(path)
		lap(1)
		lk, err := acquireLock(path)
		if err != nil {
			b.Fatal(err)
		}
		lap(2)
		fd, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err == nil {
			_, err = fd.Write(buf)
		}
		if err != nil {
			b.Fatal(err)
		}
		lap(3)
		if i%2 == 0 { // the two syncs one after the other
			if err := fd.Sync(); err != nil {
				b.Fatal(err)
			}
			lap(4)
			syncDir(dir)
			lap(5)
		} else {
			if err := syncNew(fd, dir); err != nil {
				b.Fatal(err)
			}
			lap(6)
		}
		b.StopTimer()
		fd.Close()
		lk.release()
		b.StartTimer()
	}
	for k, name := range steps {
		n := b.N
		if k >= 4 {
			n = max(1, b.N/2)
		}
		b.ReportMetric(float64(sum[k].Microseconds())/float64(n), name+"-us/op")
	}
	b.ReportMetric(0, "ns/op")
}

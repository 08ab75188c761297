package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/store"
)

// BenchmarkCreateFork is the store's part of a fork (session's
// BenchmarkFork): Create of a new file with entries read from a session
// file (so already validated) while that file is open (a fork's source
// session holds its lock), next to its floor, metered in the same
// iteration in alternating order: writing the same bytes durably under a
// new name in the same directory (create, write, fsync the file and the
// directory). On a loaded machine only paired numbers compare. Each is
// metered alone, the process's CPU (every thread's, the collector's
// included) read right before and after it, nothing of the harness in
// between: cpu-ms/op, floor-cpu-ms/op, x-floor; Close (the lock's
// release) is metered apart (close-cpu-ms/op). The files stay until the
// end: removing them would make each later new inode dearer on ext4
// without a journal (it skips recently deleted inodes one by one).
func BenchmarkCreateFork(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			dir := b.TempDir()
			src := filepath.Join(dir, "src.jsonl")
			f, err := store.Create(src, testHeader("src"), nil)
			if err != nil {
				b.Fatal(err)
			}
			g := newGen()
			for g.n < n {
				if err := f.Append(g.next()); err != nil {
					b.Fatal(err)
				}
			}
			defer f.Close() // held, as a fork's source session is
			snap, err := store.ReadSnapshot(src)
			if err != nil {
				b.Fatal(err)
			}
			data, err := os.ReadFile(src)
			if err != nil {
				b.Fatal(err)
			}
			sdir := filepath.Join(dir, "s")
			if err := os.Mkdir(sdir, 0o700); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			debug.FreeOSMemory()
			var create, floor, closing time.Duration
			i := 0
			floorRun := func() {
				c0, _ := cpuTime()
				fl, err := os.Create(filepath.Join(sdir, fmt.Sprint("floor-", i)))
				if err == nil {
					_, err = fl.Write(data)
				}
				if err == nil {
					err = fl.Sync()
				}
				if err == nil {
					var d *os.File
					if d, err = os.Open(sdir); err == nil {
						err = d.Sync()
						d.Close()
					}
				}
				if err != nil {
					b.Fatal(err)
				}
				fl.Close()
				c1, _ := cpuTime()
				floor += c1 - c0
			}
			for b.Loop() {
				i++
				b.StopTimer()
				if i%2 == 0 {
					floorRun()
				}
				b.StartTimer()
				path := filepath.Join(sdir, fmt.Sprint(i, ".jsonl"))
				c0, _ := cpuTime()
				f, err := store.Create(path, testHeader("fork"), snap.Entries)
				c1, _ := cpuTime()
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				create += c1 - c0
				c0, _ = cpuTime()
				f.Close()
				c1, _ = cpuTime()
				closing += c1 - c0
				if i%2 == 1 {
					floorRun()
				}
				if int64(i)*int64(len(data)) > 256<<20 {
					os.Remove(path)
					os.Remove(filepath.Join(sdir, fmt.Sprint("floor-", i)))
				}
				b.StartTimer()
			}
			if floor > 0 {
				b.ReportMetric(float64(create.Microseconds())/1e3/float64(i), "cpu-ms/op")
				b.ReportMetric(float64(floor.Microseconds())/1e3/float64(i), "floor-cpu-ms/op")
				b.ReportMetric(float64(create)/float64(floor), "x-floor")
				b.ReportMetric(float64(closing.Microseconds())/1e3/float64(i), "close-cpu-ms/op")
			}
		})
	}
}

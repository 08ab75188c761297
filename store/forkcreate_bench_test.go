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
// file (so already validated) and Close, next to the floor, writing the
// same bytes to a new file and fsyncing it, metered in the same iteration
// (floor-cpu-ms/op, x-floor): on a loaded machine only paired numbers
// compare. CPU is the whole process's, the collector's included.
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
			f.Close()
			snap, err := store.ReadSnapshot(src)
			if err != nil {
				b.Fatal(err)
			}
			data, err := os.ReadFile(src)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			debug.FreeOSMemory()
			var create, floor time.Duration
			i := 0
			for b.Loop() {
				i++
				b.StopTimer()
				c0, _ := cpuTime()
				fl, err := os.Create(filepath.Join(dir, "floor"))
				if err == nil {
					_, err = fl.Write(data)
				}
				if err == nil {
					err = fl.Sync()
				}
				if err != nil {
					b.Fatal(err)
				}
				fl.Close()
				os.Remove(fl.Name())
				c1, _ := cpuTime()
				floor += c1 - c0
				b.StartTimer()
				path := filepath.Join(dir, "s", fmt.Sprint(i, ".jsonl"))
				f, err := store.Create(path, testHeader("fork"), snap.Entries)
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
				c2, _ := cpuTime()
				create += c2 - c1
				b.StopTimer()
				os.Remove(path)
				b.StartTimer()
			}
			if floor > 0 {
				b.ReportMetric(float64(create.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(floor.Microseconds())/1e3/float64(b.N), "floor-cpu-ms/op")
				b.ReportMetric(float64(create)/float64(floor), "x-floor")
			}
		})
	}
}

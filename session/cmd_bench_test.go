package session

// Benchmarks of the commands that read a long branch (issue 37): rewind,
// get_trace, get_tree and fork, each at 1k, 100k and (with AMA_BENCH_1M=1,
// so that `make bench` stays minutes, not an hour) 1M entries. Every
// iteration works on a freshly resumed session (the resume is not timed):
// a command's first call in a process is the one that counts, since
// decoded messages are cached afterwards. get_tree and fork run next to
// their floor, writing the same bytes (fork: with the same fsync).

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/armadra/ama-rpc/internal/stdio"
	"github.com/armadra/ama-rpc/store"
	"github.com/armadra/ama-rpc/trace"
)

// cmdSizes are the session sizes of the command benchmarks.
func cmdSizes() []int {
	sizes := []int{1_000, 100_000}
	if os.Getenv("AMA_BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	return sizes
}

func sizeName(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return fmt.Sprint(n)
}

// lastUserID is the id of the last user message of a generated session of
// n entries (writePerfSession: user messages at i%7 == 0, i > 3).
func lastUserID(n int) string { return fmt.Sprintf("%08x", n-n%7) }

// meter measures the process CPU time while the benchmark timer runs
// (cpuMeter counts the untimed resumes too) and reports it as cpu-ms/op.
type meter struct {
	b     *testing.B
	start time.Duration
	sum   time.Duration
}

func newMeter(b *testing.B) *meter {
	m := &meter{b: b}
	m.start, _ = cpuTime()
	return m
}

// stop stops the timer and the CPU clock.
func (m *meter) stop() {
	m.b.StopTimer()
	if now, ok := cpuTime(); ok {
		m.sum += now - m.start
	}
}

// resume starts them again.
func (m *meter) resume() {
	m.start, _ = cpuTime()
	m.b.StartTimer()
}

// report reports the CPU per iteration.
func (m *meter) report() {
	m.stop()
	if m.b.N > 0 {
		m.b.ReportMetric(float64(m.sum.Microseconds())/1e3/float64(m.b.N), "cpu-ms/op")
	}
}

// coldSession opens a fresh copy of a generated session with the timer
// and the CPU clock stopped; the caller closes it. The resume's garbage
// is collected and the freed memory given back to the system before the
// clock starts again (debug.FreeOSMemory): the meter counts the whole
// process, and the collector's and the scavenger's work on what the
// resume left (madvise of hundreds of MB after a 100k resume) is not the
// command's.
func coldSession(m *meter, src string, deps *Deps) *Session {
	m.stop()
	defer m.resume()
	s := openCold(m.b, src, deps)
	debug.FreeOSMemory()
	return s
}

// openCold is coldSession without the meter and without giving memory
// back: the caller has stopped the timer. The resume's garbage is
// collected (runtime.GC), and the pages it held stay the heap's, as in a
// server, where the scavenger returns what exceeds the heap's goal slowly
// (paced at about 1% of a CPU), not all at once before each command.
// BenchmarkFork uses it as is: with the pages given back, each fork's
// allocations (47 KB) faulted in fresh pages while its floor wrote a
// buffer kept warm from one iteration to the next (0.3-0.4 ms of the
// fork's 2.6-3.1 ms per fork at load 4, paired).
func openCold(b *testing.B, src string, deps *Deps) *Session {
	path := filepath.Join(b.TempDir(), "s.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	s, err := Open(deps, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC() // the resume's garbage is not the command's
	return s
}

// BenchmarkRewind is a dry-run conversation rewind to the last user
// message (what a client's "undo the last turn" asks first).
func BenchmarkRewind(b *testing.B) {
	for _, n := range cmdSizes() {
		b.Run(sizeName(n), func(b *testing.B) {
			src, deps := perfFile(b, n, false), perfDeps(b)
			id := lastUserID(n)
			b.ReportAllocs()
			m := newMeter(b)
			for b.Loop() {
				s := coldSession(m, src, deps)
				res, err := s.Rewind(RewindRequest{EntryID: id, Mode: "conversation", DryRun: true})
				if err != nil || res.Conversation == nil || res.Conversation.Draft.Text == "" {
					b.Fatalf("rewind: %+v %v", res, err)
				}
				m.stop()
				s.Close()
				m.resume()
			}
			m.report()
		})
	}
}

// BenchmarkGetTrace is get_trace with its defaults (the active branch,
// the last 50 turns, no content).
func BenchmarkGetTrace(b *testing.B) {
	for _, n := range cmdSizes() {
		b.Run(sizeName(n), func(b *testing.B) {
			src, deps := perfFile(b, n, false), perfDeps(b)
			b.ReportAllocs()
			m := newMeter(b)
			for b.Loop() {
				s := coldSession(m, src, deps)
				res, err := s.Trace(trace.Query{})
				if err != nil || len(res.Trace.Turns) != min(trace.DefaultTurnLimit, (n-3)/7) {
					b.Fatalf("trace: %v turns, %v", len(res.Trace.Turns), err)
				}
				m.stop()
				s.Close()
				m.resume()
			}
			m.report()
		})
	}
}

// floorSync is how much of a floor's write is made durable.
type floorSync int

const (
	noSync   floorSync = iota // written only
	fileSync                  // the file fsynced
	nameSync                  // and its directory: the new name is durable too
)

// writeFloor writes data to a new file in dir, synced as sync says, the
// floor of a command that returns or writes those bytes, and returns the
// file's name (the file is closed, and left for the caller to remove).
func writeFloor(b *testing.B, dir string, data []byte, sync floorSync) string {
	f, err := os.CreateTemp(dir, "floor-")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		b.Fatal(err)
	}
	if sync >= fileSync {
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	if sync == nameSync {
		d, err := os.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Sync(); err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
	f.Close()
	return f.Name()
}

// writeFloorPieces is writeFloor in writes of treePiece bytes.
func writeFloorPieces(b *testing.B, dir string, data []byte) {
	f, err := os.CreateTemp(dir, "floor-")
	if err != nil {
		b.Fatal(err)
	}
	for p := data; len(p) > 0; {
		n := min(len(p), treePiece)
		if _, err := f.Write(p[:n]); err != nil {
			b.Fatal(err)
		}
		p = p[n:]
	}
	f.Close()
	os.Remove(f.Name())
}

// BenchmarkGetTree is get_tree: its JSON's vectors written piece by
// piece to a file (get_tree), and the whole response line as the rpc server writes it,
// through the stdout writer, to a file (wire) and to a pipe a reader
// drains (wire-pipe); next to writing the same bytes with one write
// (floor, floor-pipe) and in the writer's pieces (floor-pieces).
func BenchmarkGetTree(b *testing.B) {
	for _, n := range cmdSizes() {
		b.Run(sizeName(n), func(b *testing.B) {
			src, deps := perfFile(b, n, false), perfDeps(b)
			s := coldSession(newMeter(b), src, deps)
			defer s.Close()
			out := append(store.AppendNodesJSON([]byte(`{"tree":`), mustTree(b, s)), '}')
			dir := b.TempDir()
			b.Run("floor", func(b *testing.B) {
				b.SetBytes(int64(len(out)))
				cpu := cpuMeter(b)
				for b.Loop() {
					os.Remove(writeFloor(b, dir, out, noSync))
				}
				cpu()
			})
			// The same bytes in 64 KiB writes (how get_tree went out
			// before the writer wrote vectors); to a regular file that
			// costs more than one write.
			b.Run("floor-pieces", func(b *testing.B) {
				b.SetBytes(int64(len(out)))
				cpu := cpuMeter(b)
				for b.Loop() {
					writeFloorPieces(b, dir, out)
				}
				cpu()
			})
			// stdout is a pipe: the floor there is one write of the bytes
			// into a pipe that a reader drains (the reader's CPU counts in
			// both rows).
			b.Run("floor-pipe", func(b *testing.B) {
				b.SetBytes(int64(len(out)))
				cpu := cpuMeter(b)
				for b.Loop() {
					pipeTo(b, func(f *os.File) {
						if _, err := f.Write(out); err != nil {
							b.Fatal(err)
						}
					})
				}
				cpu()
			})
			b.Run("wire-pipe", func(b *testing.B) {
				b.SetBytes(int64(len(out)))
				b.ReportAllocs()
				cpu := cpuMeter(b)
				for b.Loop() {
					pipeTo(b, func(f *os.File) { writeTreeLine(b, s, f) })
				}
				cpu()
			})
			b.Run("get_tree", func(b *testing.B) {
				b.SetBytes(int64(len(out)))
				b.ReportAllocs()
				cpu := cpuMeter(b)
				for b.Loop() {
					f, err := os.CreateTemp(dir, "tree-")
					if err != nil {
						b.Fatal(err)
					}
					tree, err := s.TreeJSON()
					if err != nil {
						b.Fatal(err)
					}
					tree.WriteVec([]byte(`{"tree":`), []byte(`}`), func(vec [][]byte) {
						for _, p := range vec {
							if _, err := f.Write(p); err != nil {
								b.Fatal(err)
							}
						}
					})
					f.Close()
					os.Remove(f.Name())
				}
				cpu()
			})
			// The same line as the rpc server sends it: through the stdout
			// writer (stdio.Writer.SendVector: one writer goroutine,
			// backpressure, writev of the entries' stored bytes), to a file.
			b.Run("wire", func(b *testing.B) {
				b.SetBytes(int64(len(out)))
				b.ReportAllocs()
				cpu := cpuMeter(b)
				for b.Loop() {
					f, err := os.CreateTemp(dir, "wire-")
					if err != nil {
						b.Fatal(err)
					}
					writeTreeLine(b, s, f)
					f.Close()
					os.Remove(f.Name())
				}
				cpu()
			})
		})
	}
}

// writeTreeLine writes get_tree's response line to f as the rpc server
// does: through a stdout writer, in vectors produced on its goroutine.
func writeTreeLine(b testing.TB, s *Session, f *os.File) {
	w := stdio.NewWriter(f, stdio.WriterOptions{})
	tree, err := s.TreeJSON()
	if err != nil {
		b.Fatal(err)
	}
	head := []byte(`{"id":"1","type":"response","command":"get_tree","success":true,"data":{"tree":`)
	tail := []byte("}}\n")
	w.SendVector(len(head)+tree.Len()+len(tail), func(emit func([][]byte)) {
		tree.WriteVec(head, tail, emit)
	})
	w.Close()
}

// pipeTo runs write on the write end of a pipe whose read end a
// goroutine drains (as a host reads stdout), and waits for the drain.
func pipeTo(b testing.TB, write func(*os.File)) {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 1<<20)
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
		r.Close()
		close(done)
	}()
	write(w)
	w.Close()
	<-done
}

// treePiece is the write size of floor-pieces: 64 KiB, the pieces the
// writer cut get_tree into before it wrote vectors (issue 37).
const treePiece = 64 << 10

func mustTree(b *testing.B, s *Session) []*store.Node {
	nodes, err := s.Tree()
	if err != nil {
		b.Fatal(err)
	}
	return nodes
}

// BenchmarkFork forks a resumed session at its last entry (the whole
// branch is written to the new file, made durable, locked, and the new
// session started: the command as a host pays for it, the round trip to
// the session's actor included), next to its floor, metered in the same
// iteration: writing the same bytes durably under a new name in the same
// directory (create, write, fsync the file, fsync the directory; without
// the last a new name can be lost in a crash). On a shared, loaded
// machine only such pairs compare; the two run in alternating order.
//
// Each is metered alone (pairMeter): the process's CPU read right before
// and after it, with nothing of the harness in between (the timer's
// start and stop read the memory statistics, stopping the world). ns/op,
// B/op and allocs/op are the fork's alone, cpu-ms/op its CPU, and
// floor-cpu-ms/op, x-floor its floor's. The forked and floor files stay
// until the end (up to keepBytes of them): removing them would make every
// later new inode dearer on a file system without a journal (ext4
// skips the inodes deleted in the last seconds one by one), churn
// neither a fork nor its floor makes.
func BenchmarkFork(b *testing.B) {
	for _, n := range cmdSizes() {
		b.Run(sizeName(n), func(b *testing.B) {
			src, deps := perfFile(b, n, false), perfDeps(b)
			deps.Dirs.Sessions = b.TempDir() // the fork is written at once
			deps.Settings.Persist = true
			last := fmt.Sprintf("%08x", n)
			var fork, floor pairMeter
			var kept int64
			var data []byte // the floor's bytes: as many as the fork's file
			dir := ""       // the fork's directory, where the floor writes too
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				b.StopTimer()
				s := openCold(b, src, deps)
				if i%2 == 1 && data != nil {
					floor.run(func() { writeFloor(b, dir, data, nameSync) })
				}
				var f *Session
				var err error
				fork.run(func() { f, err = s.fork(last, Options{}) })
				if err != nil {
					b.Fatal(err)
				}
				path, err := f.SessionFile()
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
				s.Close()
				if data == nil {
					fi, err := os.Stat(path)
					if err != nil {
						b.Fatal(err)
					}
					data, dir = bytes.Repeat([]byte{'x'}, int(fi.Size())), filepath.Dir(path)
				}
				if i%2 == 0 {
					floor.run(func() { writeFloor(b, dir, data, nameSync) })
				}
				if kept += 2 * int64(len(data)); kept > keepBytes {
					os.Remove(path)
					removeFloors(b, dir)
				}
				i++
				b.StartTimer()
			}
			fork.report(b, "")
			floor.report(b, "floor-")
			if fork.cpu > 0 && floor.cpu > 0 {
				// per op of each (the first iteration's floor runs after its
				// fork, once the fork's size is known)
				b.ReportMetric(float64(fork.cpu)/float64(fork.n)/(float64(floor.cpu)/float64(floor.n)), "x-floor")
			}
		})
	}
}

// keepBytes bounds the forked and floor files BenchmarkFork keeps.
const keepBytes = 512 << 20

// removeFloors removes writeFloor's files in dir.
func removeFloors(b *testing.B, dir string) {
	m, _ := filepath.Glob(filepath.Join(dir, "floor-*"))
	for _, p := range m {
		os.Remove(p)
	}
}

// pairMeter meters one side of a pair: the process's CPU (getrusage:
// every thread, the runtime's included), the wall time and the heap
// allocations of each run, read right before and after it.
type pairMeter struct {
	n                  int
	cpu, wall          time.Duration
	allocBytes, allocs uint64
}

// allocSamples are the runtime's counts of heap allocations
// (runtime.ReadMemStats, which stops the world: read outside the CPU
// window, as the collection before each fork is).
func allocSamples() (bytes, objects uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc, ms.Mallocs
}

func (p *pairMeter) run(f func()) {
	b0, o0 := allocSamples()
	t0 := time.Now()
	c0, _ := cpuTime()
	f()
	c1, _ := cpuTime()
	t1 := time.Now()
	b1, o1 := allocSamples()
	p.n++
	p.cpu += c1 - c0
	p.wall += t1.Sub(t0)
	p.allocBytes += b1 - b0
	p.allocs += o1 - o0
}

// report reports the CPU per run as <prefix>cpu-ms/op; without a prefix
// also the wall time and allocations as ns/op, B/op and allocs/op
// (replacing the benchmark's own, which count the whole iteration).
func (p *pairMeter) report(b *testing.B, prefix string) {
	if p.n == 0 {
		return
	}
	n := float64(p.n)
	b.ReportMetric(float64(p.cpu)/1e6/n, prefix+"cpu-ms/op")
	if prefix == "" {
		b.ReportMetric(float64(p.wall)/n, "ns/op")
		b.ReportMetric(float64(p.allocBytes)/n, "B/op")
		b.ReportMetric(float64(p.allocs)/n, "allocs/op")
	}
}

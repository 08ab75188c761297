package session

// Benchmarks of the commands that read a long branch (issue 37): rewind,
// get_trace, get_tree and fork, each at 1k, 100k and (with AMA_BENCH_1M=1,
// so that `make bench` stays minutes, not an hour) 1M entries. Every
// iteration works on a freshly resumed session (the resume is not timed):
// a command's first call in a process is the one that counts, since
// decoded messages are cached afterwards. get_tree and fork run next to
// their floor, writing the same bytes (fork: with the same fsync).

import (
	"fmt"
	"os"
	"path/filepath"
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
	b := m.b
	m.stop()
	defer m.resume()
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
	debug.FreeOSMemory() // the resume's garbage is not the command's
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
// floor of a command that returns or writes those bytes.
func writeFloor(b *testing.B, dir string, data []byte, sync floorSync) {
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
	os.Remove(f.Name())
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
					writeFloor(b, dir, out, noSync)
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
// branch is written to the new file), next to writing and syncing the same
// bytes (floor). The fork row also writes the floor once per iteration,
// metered apart and right before the fork, and reports both with their
// ratio (floor-cpu-ms/op, x-floor): on a shared, loaded machine the two
// rows run minutes apart, and only the paired numbers compare. It also
// reports the floor of a durable new file (durable-floor-cpu-ms/op,
// x-durable: the floor and an fsync of its directory, without which a
// new name can be lost in a crash), which a fork cannot go below.
func BenchmarkFork(b *testing.B) {
	for _, n := range cmdSizes() {
		b.Run(sizeName(n), func(b *testing.B) {
			src, deps := perfFile(b, n, false), perfDeps(b)
			deps.Dirs.Sessions = b.TempDir() // the fork is written at once
			deps.Settings.Persist = true
			last := fmt.Sprintf("%08x", n)
			fork := func(m *meter, s *Session) int64 {
				f, err := s.fork(last, Options{})
				if err != nil {
					b.Fatal(err)
				}
				path, _ := f.SessionFile()
				m.stop()
				f.Close()
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				os.Remove(path)
				m.resume()
				return fi.Size()
			}
			m := newMeter(b)
			s := coldSession(m, src, deps)
			size := fork(m, s)
			s.Close()
			data := make([]byte, size)
			for i := range data {
				data[i] = 'x'
			}
			dir := b.TempDir()
			b.Run("floor", func(b *testing.B) {
				b.SetBytes(size)
				cpu := cpuMeter(b)
				for b.Loop() {
					writeFloor(b, dir, data, fileSync)
				}
				cpu()
			})
			b.Run("fork", func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				m := newMeter(b)
				var floor, durable time.Duration
				for b.Loop() {
					s := coldSession(m, src, deps)
					m.stop()
					t0, _ := cpuTime()
					writeFloor(b, dir, data, fileSync)
					t1, _ := cpuTime()
					writeFloor(b, dir, data, nameSync)
					t2, _ := cpuTime()
					floor += t1 - t0
					durable += t2 - t1
					m.resume()
					fork(m, s)
					m.stop()
					s.Close()
					m.resume()
				}
				m.report()
				if b.N > 0 && floor > 0 && durable > 0 {
					b.ReportMetric(float64(floor.Microseconds())/1e3/float64(b.N), "floor-cpu-ms/op")
					b.ReportMetric(float64(m.sum)/float64(floor), "x-floor")
					b.ReportMetric(float64(durable.Microseconds())/1e3/float64(b.N), "durable-floor-cpu-ms/op")
					b.ReportMetric(float64(m.sum)/float64(durable), "x-durable")
				}
			})
		})
	}
}

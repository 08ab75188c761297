package memlimit

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

var (
	mu     sync.Mutex
	orig   int64 // the limit before ours
	ours   int64 // the limit set by Reserve; 0: none
	hooked bool  // the after-GC check is registered
	due    bool  // a Reserve since the last Done
)

// Reserve sets the soft memory limit to the live heap plus need bytes,
// unless the limit in force is already tighter. It first runs a
// collection, so that the live heap is measured now (the huge line
// included) rather than at the last cycle, which may have seen garbage of
// the previous huge line (its text lives until its run ends) as live and
// would let the heap grow by that much more; and it returns the freed
// pages to the OS, so the line's handling starts from the live heap: the
// buffers the reader doubled through (8, 16, 32 MiB for a 40 MiB line)
// are not resident beside the handling's own buffers (issue 28: left
// resident, whether the handling reused them depended on when the
// collector ran, and the ACP peak for three 40 MiB prompts varied 163-223
// MB). Huge lines are rare; a cycle over a heap of mostly byte slices
// costs a few milliseconds.
func Reserve(need int64) {
	debug.FreeOSMemory()
	mu.Lock()
	defer mu.Unlock()
	due = true
	cur := debug.SetMemoryLimit(-1)
	if ours == 0 {
		orig = cur
	}
	limit := live() + need
	if limit >= orig {
		return
	}
	ours = limit
	debug.SetMemoryLimit(limit)
	if !hooked {
		hooked = true
		afterGC()
	}
}

// afterGC registers check to run after the next collection (a finalizer
// of an unreachable object runs once a cycle has found it dead).
func afterGC() {
	runtime.SetFinalizer(new([16]byte), func(*[16]byte) { check() })
}

// check lifts our limit when the live heap came within 3% of it (the
// collector would soon run back to back), and
// re-registers itself while a limit of ours is in force.
func check() {
	mu.Lock()
	defer mu.Unlock()
	if ours != 0 && live() > ours-ours/32 {
		debug.SetMemoryLimit(orig)
		ours = 0
	}
	if ours == 0 {
		hooked = false
		return
	}
	afterGC()
}

var sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// live is the heap marked live by the last collection. Called with mu
// held (sample is shared).
func live() int64 {
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(sample[0].Value.Uint64())
}

// HugeBytes is the size from which a line (read or written) is huge: a
// huge prompt and the events that carry it.
const HugeBytes = 8 << 20

// Growing is called by the line reader when a line being read reaches
// HugeBytes: if a limit of ours is in force since an earlier huge line, a
// collection runs now and the freed pages go back to the OS, so that the
// text the earlier line's run held is not counted as live when the heap
// goal is set for this line's buffers (which would let the heap grow by
// that much more before Accepted measures anything). The limit stays
// until the live heap comes near it, as after any collection. Only the
// first huge line after an accepted one acts.
func Growing() {
	mu.Lock()
	active := due && ours != 0
	due = false
	mu.Unlock()
	if active {
		debug.FreeOSMemory()
	}
}

// Accepted is called with each accepted line's length before it is
// handled: a huge line gets a soft memory limit of the live heap
// (measured now, the line included) plus 2x its size plus 30 MB, so the
// GC keeps pace with the buffers the line's handling needs next to the
// line: its text, its entry, one event line at a time (the line's buffer
// is freed after decoding). Measured best of 2x, 3x and 4x (issue 12).
func Accepted(n int) {
	if n >= HugeBytes {
		Reserve(2*int64(n) + 30e6)
	}
}

// Dropped is called when the reader dropped an oversized line's buffer:
// that memory goes back to the OS now rather than at the runtime's
// leisurely pace, so a rejected line leaves no trace.
func Dropped() { debug.FreeOSMemory() }

// Written is called by the writer once a line of n bytes is out. A huge
// line's buffer is garbage now: it is collected before the next huge line
// (its sender is building it) needs the room, so that room is reused
// instead of the heap growing by a line each time. Left to GOGC, the
// collection lags behind a burst of 50 MiB lines (one prompt sends four),
// more so on a loaded machine (peak RSS 243 MB measured idle, 347 MB
// under load without this). The cost is one collection of the live heap
// per huge line.
func Written(n int) {
	if n >= HugeBytes {
		runtime.GC()
	}
}

// startupSettle is how long after the server starts the start-up garbage
// is released: after hello and the first commands of a client that
// starts talking at once, so the collection does not delay them.
const startupSettle = 200 * time.Millisecond

// ReleaseStartup returns the heap that start-up left behind to the
// kernel, once, shortly after the server starts (app calls it before
// serving). Most of it is garbage: package initialisation allocates about
// 1 MB (GODEBUG=inittrace=1; it was 3.2 MB while
// github.com/santhosh-tekuri/jsonschema/v6 was linked, see
// tools/argschema.go), the server's own start about 0.4 MB (the tool
// schemas), and about 2 MB of heap hold under 1 MB live when this runs. A
// young heap that small is not collected soon, and the runtime's
// scavenger returns freed pages only slowly, so an idle process would keep
// them resident. One forced collection of a heap of a few MB costs about a
// millisecond of CPU. Once per process: a process serves once, and a test
// binary that starts hundreds of in-process servers (the golden package)
// would otherwise collect its whole, large heap after each start (6% of
// that package's CPU under -race).
func ReleaseStartup() {
	startupOnce.Do(func() { time.AfterFunc(startupSettle, debug.FreeOSMemory) })
}

var startupOnce sync.Once

package memlimit

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
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
// would let the heap grow by that much more. Huge lines are rare; a cycle
// over a heap of mostly byte slices costs a few milliseconds.
func Reserve(need int64) {
	runtime.GC()
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

// Limit reports the limit set by Reserve (0: none), for tests.
func Limit() int64 {
	mu.Lock()
	defer mu.Unlock()
	return ours
}

// Done is called when the work a reservation was made for has ended (the
// run of a huge prompt settled): if a limit of ours is in force, a
// collection runs now, so that the text the run held until now is not
// counted as live when the next heap goal is set (otherwise the next huge
// line may grow the heap by that much more while it is read, before
// Reserve measures anything). The limit stays until the live heap comes
// near it, as after any collection: in force, it also makes the runtime
// return the freed pages to the OS sooner. Only the first Done after a
// Reserve acts (later runs are small ones); no-op without a limit of ours.
func Done() {
	mu.Lock()
	active := due && ours != 0
	due = false
	mu.Unlock()
	if active {
		debug.FreeOSMemory()
	}
}

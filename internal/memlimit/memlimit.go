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
)

// Reserve sets the soft memory limit to the live heap plus need bytes,
// unless the limit in force is already tighter.
func Reserve(need int64) {
	mu.Lock()
	defer mu.Unlock()
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

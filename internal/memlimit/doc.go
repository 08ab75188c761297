// Package memlimit keeps the memory of a huge line near what it needs.
// It is the one owner of the process's memory limit and of every forced
// collection (golden/arch_memory_test.go fails on runtime.GC,
// debug.FreeOSMemory or debug.SetMemoryLimit elsewhere); the transport
// calls it (internal/stdio: the line reader's Growing, Accepted and
// Dropped, the writer's Written) and app at start (ReleaseStartup, once per process),
// so the protocols know nothing of the collector. Reserve sets a soft memory
// limit (runtime/debug.SetMemoryLimit) of the live heap plus the line's
// budget, so the collector runs before
// the heap doubles (GOGC's pace, which a burst of 50 MiB buffers outruns,
// more so on a loaded machine). It is a backstop next to the real cuts
// (lines built once, in exact buffers): a limit below the live heap would
// make the collector run back to back, so the limit is lifted (the one
// from before, GOMEMLIMIT or none, restored) after any collection that
// finds the live heap within 3% of it; it is never set above a tighter
// limit the user chose. Reserve measures the live heap with a collection
// of its own and returns the freed pages to the OS (the line's handling
// starts from the live heap, not beside the buffers the reader doubled
// through); Growing, when the next huge line starts to arrive, collects
// what the earlier one's run held and returns the freed pages to the OS,
// so the next huge line starts from the live heap.
//
// Safe for concurrent use; the state is process-wide, like the limit.
package memlimit

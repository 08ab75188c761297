package app

import (
	"runtime/debug"
	"time"
)

// startupSettle is how long after the server starts the start-up garbage
// is released: after hello and the first commands of a client that
// starts talking at once, so the collection does not delay them.
const startupSettle = 200 * time.Millisecond

// releaseStartup returns the heap that start-up left behind to the
// kernel, once, shortly after the server starts. Most of it is garbage:
// package initialisation allocates about 1 MB (GODEBUG=inittrace=1; it
// was 3.2 MB while github.com/santhosh-tekuri/jsonschema/v6 was linked,
// see tools/argschema.go), the server's own start about 0.4 MB (the tool
// schemas), and about 2 MB of heap hold under 1 MB live when this runs.
// A young heap that small is not collected soon, and the runtime's
// scavenger returns freed pages only slowly, so an idle process would keep
// them resident. debug.FreeOSMemory collects and returns them (one forced
// collection of a heap of a few MB, about a millisecond of CPU).
func releaseStartup() {
	time.AfterFunc(startupSettle, debug.FreeOSMemory)
}

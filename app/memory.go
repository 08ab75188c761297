package app

import (
	"runtime/debug"
	"time"
)

// startupSettle is how long after the server starts the start-up garbage
// is released: after hello and the first commands of a client that
// starts talking at once, so the collection does not delay them.
const startupSettle = 200 * time.Millisecond

// releaseStartup returns the heap that package initialisation left behind
// to the kernel, once, shortly after the server starts. Most of it is
// garbage: github.com/santhosh-tekuri/jsonschema/v6 compiles the
// meta-schemas of five drafts in its init (1.7 MB in 21,000 allocations,
// of which 0.5 MB stays live), the regular expressions of approvals, plan
// and trace add about 0.4 MB. A young heap that small is not collected
// soon, and the runtime's scavenger returns freed pages only slowly, so
// an idle process kept them resident: about 3 MiB of its baseline RSS.
// debug.FreeOSMemory collects and returns them (one forced collection of
// a heap of a few MB, about a millisecond of CPU).
func releaseStartup() {
	time.AfterFunc(startupSettle, debug.FreeOSMemory)
}

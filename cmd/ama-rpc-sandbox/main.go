// Command ama-rpc-sandbox is ama-rpc's sandbox launcher as a binary of its
// own: `ama-rpc-sandbox <path> -- <argv…>` builds the jail, applies the
// seccomp filter and the Landlock ruleset the parent ama-rpc prepared, and
// runs the command (package sandbox/launcher). ama-rpc uses it when it lies
// next to the ama-rpc executable: it links only the standard library, so
// it starts faster than re-executing ama-rpc itself (which remains the
// fallback, `ama-rpc __sandbox-exec …`). `ama-rpc-sandbox __sandbox-canary
// …` runs the canary probes (handled by the launcher package's init).
package main

import (
	"os"

	"github.com/armadra/ama-rpc/sandbox/launcher"
)

func main() { launcher.Main(os.Args[1:]) }

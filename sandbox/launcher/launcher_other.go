//go:build !linux

package launcher

import "os"

// Main is the launcher's entry point. Off Linux there is no jail to build
// (no Landlock, no namespaces): ama-rpc never selects the launcher there,
// so reaching this is a caller's mistake and fails closed with 126, the
// exit code of a command that could not be run.
func Main(args []string) {
	os.Stderr.WriteString("ama-rpc sandbox: the sandbox launcher needs Linux\n")
	os.Exit(126)
}

// Package replaykit is the replay kit for hosts' CI (`ama-rpc replay`):
// it runs the real server in-process with the scripted fake model
// (llm/fake, AMA_FAKE_SCRIPT), deterministic clocks and ids, in a fresh
// temporary root (home/ and work/), plays a host's command lines (with
// the golden fixtures' @-directives for ordering), and writes the
// normalised transcript (internal/transcript, the golden tests'
// normaliser). Check compares two transcripts by shape.
//
// Not to be confused with the rpc command `replay` (re-sending events
// after a cursor): this is a test harness around the whole server.
//
// Each Replay call owns its root, pipes and goroutines and removes the
// root when it returns; nothing is shared between calls, so calls may run
// concurrently. The server is injected (Server) so the package does not
// import app, which wires the subcommand.
package replaykit

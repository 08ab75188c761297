// Package telemetry is the cache and throughput accounting of sessions:
// request records, the per-endpoint cache reporting state (unknown /
// reported / silent), cache-miss detection with its reasons and noise
// floor, hit rates and re-billing, the cache-warming decision and schedule,
// and the time-to-first-token / tokens-per-second numbers of streamed
// replies.
//
// The package is pure: it performs no I/O, starts no goroutines and reads
// no clock of its own; every time is passed in (or read from an injected
// func). Callers turn its results into session events.
//
// Concurrency: Reporting is safe for concurrent use (one process-wide table
// shared by every session). Throughput is safe for concurrent use (the
// runner goroutine feeds deltas while the actor reads snapshots); its
// per-delta cost is one mutex and no allocation, and it reads the clock
// on a sample of the deltas only while they come faster than one per
// millisecond (see sampleResolution for what that does to the numbers). Cache and Warmer belong to
// one session and must be used from one goroutine at a time (the session
// actor).
package telemetry

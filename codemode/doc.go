// Package codemode is the codemode tool: the model sends one JavaScript
// program that calls other tools as tools.<name>(args), in parallel, and
// only the program's output comes back (README "Codemode").
//
// Engine: github.com/dop251/goja, an ECMAScript interpreter in pure Go
// (no cgo, no Node). It is maintained, has promises and async functions,
// and exposes nothing of the host unless given: the script's runtime has
// only the ECMAScript built-ins and the globals of prelude.js, so scripts
// are strict by construction (no file system, network, process or timer
// access; eval and the Function constructors are removed). QuickJS on
// wazero was the alternative (a wasm memory cap); goja in a child process
// gets a hard cap from the kernel instead and keeps the build pure Go.
//
// Each script runs in its own child process (the ama-rpc binary, or a
// test binary linking this package, started with ChildArg; init takes the
// process over before main). The child has an empty environment, its own
// process group, RLIMIT_DATA and the Go memory limit (codemode.maxHeapMb),
// plus a heap watchdog that interrupts the script with the memory error.
// Parent and child speak JSON lines (protocol.go); the parent kills the
// group on timeout or abort.
//
// Concurrency: a Tool is safe for concurrent use; each Execute owns one
// child, one reader goroutine for its stdout and one goroutine per nested
// call in flight (at most 8). Nested calls go through
// tools.CallSession.ExecuteTool, the session's own gate; Execute returns
// only after every nested call it started has ended, so their events lie
// between the codemode call's start and end. In the child, the goja
// runtime is owned by the main goroutine (goja is not goroutine-safe); a
// stdin reader feeds it tool results and the watchdog only calls
// Runtime.Interrupt, which is safe from any goroutine.
package codemode

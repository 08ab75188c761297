// Package app is the composition root of ama-rpc: it parses flags, reads
// configuration, builds the model registry, tools, permission broker and
// the startup session, and runs the protocol server (rpc or acp), print
// mode (-p, package printmode) or a subcommand (explain, sessions).
// cmd/ama-rpc only adapts the process (signals, stdio, exit code) to Main.
//
// Concurrency: Main runs on the caller's goroutine until the server stops;
// everything it builds is owned by the server it starts.
package app

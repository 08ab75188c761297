// Package hooks implements ama's command hooks (hooks.json): loading and
// validating the three layers, the matcher language, running the commands
// (/bin/sh -c, own process group, timeouts, output caps), interpreting exit
// codes and stdout, and merging the results of one event.
//
// The pure parts (Parse, ParseMatcher, ParseOutput, Interpret, Merge,
// BuildInput, ApplyToVerdict) have no side effects and are tested on their
// own; Run and Dispatcher.Run start processes.
//
// Concurrency contract: a Set and a Dispatcher are read-only after
// construction and safe for concurrent use. Dispatcher.Run starts every
// matching command of one event in parallel and returns when all have
// finished (or were killed); it never blocks on anything else. A nil
// *Dispatcher is valid and has no hooks: Has and MayMatch on it return false
// without allocating, which is what keeps the tool path free when no hook
// is configured.
package hooks

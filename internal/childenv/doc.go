// Package childenv owns the environment of every program ama-rpc starts:
// the bash tool's commands, hooks, the host sidecar, external agents, the
// version probe of agent CLIs, the sandbox probe and ama-rpc's own git.
// Scrub is the one function and credential the one list of what such a
// child must not see (the model's provider keys and secret-bearing
// endpoints); Policy.Pass re-adds what a child is meant to get. Git builds
// the command of ama-rpc's own git, which additionally runs no hook, pager,
// external diff, textconv, fsmonitor, submodule or network transport of the
// repository, and refuses at once (ErrGitFile) when a file every git call
// opens is a FIFO or not a regular file (checkGitFiles). LookPath is where ama-rpc finds a program it starts by name:
// PATH without its relative entries and those inside the project.
//
// An architecture test (golden/arch_test.go) keeps every exec.Cmd of the
// tree on this package: no os.Environ() elsewhere, and every command gets
// an explicit Env.
//
// Pure functions over their arguments (Environ and Git read os.Environ);
// safe for concurrent use. A leaf over internal/secrets (Within).
package childenv

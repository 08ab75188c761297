// Package secrets is the one list of where credentials live. The rule tier
// of auto mode (approvals) treats reads of these paths as secret reads, the
// sandbox hides them from sandboxed commands, and the file tools skip them
// when they walk a tree. Adding a credential store here reaches all three.
// It also lists the project files that external agent CLIs, started
// outside the sandbox, obey (AgentConfigPaths, AgentEnvFiles): the sandbox
// keeps them read-only and auto mode asks before writing them.
//
// All judgements are lexical: paths are compared as cleaned absolute
// strings and never looked up. Pure functions and read-only package
// variables, safe for concurrent use; a leaf that imports only the
// standard library.
package secrets

// Package tools implements the agent's built-in tools (read, write, edit,
// bash, grep, glob, ls), their JSON Schema validation and their approval
// previews.
//
// Concurrency: tools are stateless values; per-session state lives in Env
// (ReadTracker, Jobs), whose types are safe for concurrent use. Execute may
// be called concurrently for read tools. Tools never write to stdout.
package tools

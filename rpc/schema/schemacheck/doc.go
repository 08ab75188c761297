// Package schemacheck validates live wire lines against the schema of
// package rpc/schema, with github.com/santhosh-tekuri/jsonschema/v6 (an
// implementation independent of the generator). It is for tests: the
// golden harness checks every line its end-to-end runs write (rpc, ACP,
// print mode) and every command it sends.
//
// The schema is generated and compiled once (sync.Once); compiled schemas
// are read-only, so every function is safe for concurrent use. A line
// that passed a check passes it again without being validated again (see
// valid).
package schemacheck

// Package schema generates the JSON Schema (draft 2020-12) of the native
// rpc protocol from the Go wire types: the hello line, the response
// envelope (its code enum from wirecode's one table) with each command's
// success data (data.<command>), each command line with its parameters
// (command.<command>, from rpc.CommandWires: the types the handlers decode
// into and answer with) and every event of package events. Each definition carries "x-stability" (stable
// or experimental) and the document "x-protocolVersion" (rpc's
// ProtocolVersion). Where a Go type does not describe its JSON (a custom
// MarshalJSON, an interface), the schema of that type is written here by
// hand and says so in its description.
//
// The package is pure: Generate builds a fresh document on each call and
// shares nothing, so it is safe for concurrent use.
package schema

// Package schema generates the JSON Schema (draft 2020-12) of the native
// rpc protocol from the Go wire types: the hello line, the response
// envelope (its code enum from wirecode's one table) with each command's
// success data (data.<command>), each command line with its parameters
// (command.<command>, from rpc.CommandWires: the types the handlers decode
// into and answer with), every event of package events, print mode's
// lines (printLine) and ama-rpc's ACP extensions (acp.<name>, from
// acp.Extensions). Each definition carries "x-stability" (stable or
// experimental) and the document "x-protocolVersion" (rpc's
// ProtocolVersion). Where a Go type does not describe its JSON (a custom
// MarshalJSON, an interface, a recursive type), the schema of that type is
// written here by hand and says so in its description.
//
// Breaking and Gate are the schema-diff check: what a change of the
// stable definitions removes or tightens, and whether the protocol
// version and the Changes document allow it.
//
// The package is pure: Generate builds a fresh document on each call and
// shares nothing, so it is safe for concurrent use.
package schema

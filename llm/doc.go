// Package llm holds the conversation vocabulary shared by every layer of ama-rpc
// (content blocks, the message roles of a session, usage and cost), the model
// catalogue types, and the Provider interface that model back ends implement.
//
// The JSON encoding of these types is the session-file and transcript shape of
// ama: struct field order is the key order clients and goldens rely on, and
// optional fields are omitted when empty. Tool-call arguments are kept as raw
// JSON so the key order the model produced survives a round trip.
//
// Concurrency: values in this package are plain data. A Builder belongs to one
// stream and must only be used by the goroutine that runs that stream;
// Provider implementations must be safe for concurrent Stream calls.
//
// Dependencies: standard library only. This is a leaf package.
package llm

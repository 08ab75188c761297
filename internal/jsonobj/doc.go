// Package jsonobj is the one JSON scanner: Scanner validates a value in
// one pass (what JSON.parse accepts) and records the spans of the
// top-level members or elements; Members, RawMembers and Elements visit
// them in place. Values are sub-slices of the input, so a line holding a
// 50 MiB prompt is not copied to find its envelope keys or its content
// blocks. Readers: the session store (every line of a session file), the
// native command envelope, ACP's parked params and prompt blocks, trace.
// It is a pure leaf: no state (a Scanner belongs to one goroutine),
// imports only the standard library.
package jsonobj

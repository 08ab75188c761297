// Package jsonobj is the one hand-written JSON scanner. Scanner validates
// a value exactly as JSON.parse does and records, in the same pass, the
// byte spans of the members of its top-level object (and of the nested
// values its Nests name) without decoding any of them: store reads every
// session line with it. Members, RawMembers and Elements visit an
// object's members or an array's elements in place, sub-slices of the
// input, so a line holding a 50 MiB prompt is not copied to find its
// envelope keys or its content blocks. It is pure, and imports of ours
// only internal/jsonstr (HasStop: which bytes end a plain run of a
// string's bytes, one word at a time); the package functions are safe for concurrent
// use, a Scanner belongs to one goroutine at a time.
package jsonobj

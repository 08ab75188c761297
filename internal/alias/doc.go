// Package alias is the one place where ama-rpc makes a string and a byte
// slice share memory (package unsafe), so that a huge prompt, image or
// session entry is held once: a text or image decoded in place from the
// line it arrived in, an entry's message sharing its body's bytes, a big
// string moved into a read-only file mapping (store/spill.go).
//
// The contract, for every caller:
//   - String(b) and the bytes of b are one memory: from the call on, b
//     must never be written again, by anyone, for as long as the string
//     may be used. Callers alias only bytes that are immutable by their
//     own contract: a line the reader handed over (stdio.LineReader.Take),
//     an entry's body (store.Entry is immutable once it exists), a string
//     arena whose bytes are never written again once handed out, a sealed
//     read-only mapping. A slice only borrowed for a call (a number read
//     for strconv) may be aliased for that call alone.
//   - Bytes(s) is a read-only view: writing to it is undefined behaviour
//     (a string constant's bytes are in read-only memory).
//   - The lifetime is the garbage collector's: an aliased string keeps the
//     whole backing array alive (a string over a few bytes of a 40 MiB
//     line keeps the line), so alias big parts of a buffer, or parts of a
//     buffer that lives as long anyway. Memory that is not the Go heap (a
//     file mapping) must outlive every alias of it: the store never
//     unmaps a blob.
//   - ID and Offset compare addresses only, never read the bytes.
//
// Pure and safe for concurrent use.
package alias

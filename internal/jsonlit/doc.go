// Package jsonlit is the one owner of a huge JSON string decoded in place:
// a member of a decoded struct typed Lit keeps its string literal where
// the decoded data holds it, and a huge literal without escapes (base64
// image data, a pasted text without newlines) becomes a string over those
// same bytes (internal/alias), so a 40 MiB prompt part is held once, by
// the line it arrived in. Both protocols decode their prompts through it
// (rpc's prompt command, ACP's session/prompt blocks and resources).
//
// Lift (lift.go) keeps the huge literals of a validated line out of
// encoding/json's decode, which would validate them again: the callers
// decode a small copy and Lifted.Lit gives their Lits the literals back.
//
// The data decoded into a Lit must never be written again (internal/alias's
// contract): a line handed over by the reader (stdio.LineReader.Take), or
// a copy made for the decode.
//
// Pure and safe for concurrent use.
package jsonlit

// Package jsonstr writes JSON strings without reflection, for the hot
// paths of the wire writer and the session file writer, and is the one
// decoder of JSON string literals written by hand (AppendUnquoted: the
// OpenAI chunk fast path, ACP's huge prompt texts). It is pure and safe
// for concurrent use.
package jsonstr

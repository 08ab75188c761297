// Package jsonstr writes JSON strings without reflection, for the hot
// paths of the wire writer and the session file writer. It is pure and
// safe for concurrent use.
package jsonstr

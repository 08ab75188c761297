// Package jsonobj visits the members of a JSON object and the elements of
// a JSON array in place: the values are sub-slices of the input, so a
// line holding a 50 MiB prompt is not copied to find its envelope keys or
// its content blocks. It is a pure leaf: no state, safe for concurrent
// use, imports only the standard library.
package jsonobj

package alias

import "unsafe"

// String returns a string holding b's bytes without a copy (see the
// package contract: b is never written again).
func String(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Bytes returns s's bytes without a copy, for reading only.
func Bytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// Slice returns the n bytes at p (from Ptr), as Bytes does for a string.
func Slice(p *byte, n int) []byte { return unsafe.Slice(p, n) }

// Ptr is the address of b's first byte (nil for a nil slice): with len(b)
// it is b again (Slice), in one word an atomic pointer can swap.
func Ptr(b []byte) *byte { return unsafe.SliceData(b) }

// ID identifies a string's bytes by address and length: two strings with
// the same ID are one memory, and the ID of a string that is never freed
// (a mapped one) never comes to mean other bytes. A map key.
type ID struct {
	p *byte
	n int
}

// IDOf returns s's ID.
func IDOf(s string) ID { return ID{unsafe.StringData(s), len(s)} }

// Offset returns where s's bytes lie in b when they lie within it (s was
// made over b's bytes, String).
func Offset(s string, b []byte) (int, bool) {
	if len(s) == 0 || len(b) == 0 {
		return 0, false
	}
	t, start := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if t < start || t+uintptr(len(s)) > start+uintptr(len(b)) {
		return 0, false
	}
	return int(t - start), true
}

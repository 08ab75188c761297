//go:build !linux

package store

// canMap is false: without sealed memfds an entry stays on the heap
// (spill.go).
const canMap = false

func sealedCopy([]byte) ([]byte, error) { return nil, errNoMap }

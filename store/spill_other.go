//go:build !unix

package store

import "os"

// canMap is false: entries stay on the heap (spill.go).
const canMap = false

func mapFile(*os.File, int64, int) ([]byte, error) { return nil, errNoMap }

//go:build !unix

package store_test

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }

//go:build !unix

package session

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }

package telemetry

import (
	"testing"
	"time"
)

// BenchmarkThroughputDeltaWallClock is BenchmarkThroughputDelta with an
// injected time.Now (two clock readings per delta) for comparison.
func BenchmarkThroughputDeltaWallClock(b *testing.B) {
	tp := NewThroughput(time.Now, true)
	tp.Begin()
	b.ReportAllocs()
	for b.Loop() {
		tp.Delta("text_delta", "tok ")
	}
}

package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// A reservation sets a limit above the live heap; once the live heap
// comes near it, a collection lifts it and restores the previous one.
func TestReserveThenLift(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	runtime.GC()
	Reserve(64 << 20)
	l := Limit()
	if l == 0 || debug.SetMemoryLimit(-1) != l {
		t.Fatalf("no limit set (ours %d)", l)
	}
	if l <= live() {
		t.Fatalf("limit %d not above the live heap %d", l, live())
	}
	keep := make([]byte, 80<<20) // the live heap passes the limit
	for i := 0; i < 10 && Limit() != 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	runtime.KeepAlive(keep)
	if Limit() != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Fatalf("limit not lifted: ours %d, in force %d", Limit(), debug.SetMemoryLimit(-1))
	}
}

// A tighter limit the user chose (GOMEMLIMIT) is kept.
func TestReserveKeepsATighterLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(1 << 20)
	defer debug.SetMemoryLimit(prev)
	Reserve(64 << 20)
	if Limit() != 0 || debug.SetMemoryLimit(-1) != 1<<20 {
		t.Fatal("a tighter limit was replaced")
	}
}

// Growing collects (and keeps the limit) once after a reservation.
func TestGrowing(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	var ms runtime.MemStats
	gcs := func() uint32 { runtime.ReadMemStats(&ms); return ms.NumGC }
	Reserve(64 << 20)
	l := Limit()
	if l == 0 {
		t.Fatal("no limit set")
	}
	before := gcs()
	Growing()
	if gcs() == before {
		t.Fatal("Growing did not collect")
	}
	if Limit() != l {
		t.Fatalf("limit changed by Growing: %d, was %d", Limit(), l)
	}
	before = gcs()
	Growing()
	if gcs() != before {
		t.Fatal("a second Growing collected again")
	}
}

// A huge accepted line reserves; a small one does not.
func TestAccepted(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	mu.Lock()
	ours = 0 // forget the earlier tests' limit
	mu.Unlock()
	Accepted(HugeBytes - 1)
	if Limit() != 0 {
		t.Fatal("a line under HugeBytes reserved")
	}
	Accepted(HugeBytes)
	if Limit() == 0 {
		t.Fatal("a huge line did not reserve")
	}
}

// Limit reports the limit set by Reserve (0: none).
func Limit() int64 {
	mu.Lock()
	defer mu.Unlock()
	return ours
}

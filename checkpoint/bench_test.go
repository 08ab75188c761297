package checkpoint_test

import (
	"crypto/rand"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/checkpoint"
)

// BenchmarkSnapshot measures Snapshot (Lstat, read, hash, Put) of a 1 MiB
// file: "dedup" when the blob is already stored, "new" when every
// iteration stores a new blob.
func BenchmarkSnapshot(b *testing.B) {
	data := make([]byte, 1<<20)
	rand.Read(data)
	for _, bc := range []struct {
		name   string
		mutate bool
	}{{"dedup", false}, {"new", true}} {
		b.Run(bc.name, func(b *testing.B) {
			dir := b.TempDir()
			s := checkpoint.NewStore(filepath.Join(dir, "data"), 0)
			p := filepath.Join(dir, "f")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.SetBytes(int64(len(data)))
			var n uint64
			for b.Loop() {
				if bc.mutate {
					b.StopTimer()
					n++
					if _, err := f.WriteAt(binary.LittleEndian.AppendUint64(nil, n), 0); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				rec, err := s.Snapshot(p)
				if err != nil || rec.Blob == nil {
					b.Fatalf("Snapshot = %+v, %v", rec, err)
				}
			}
		})
	}
}

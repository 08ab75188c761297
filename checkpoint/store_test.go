package checkpoint_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/armadra/ama-rpc/checkpoint"
)

func TestStorePutGet(t *testing.T) {
	dir := t.TempDir()
	s := checkpoint.NewStore(dir, 0)
	content := []byte("hello\n")

	h1, err := s.Put(content)
	if err != nil {
		t.Fatal(err)
	}
	if h1 != sha("hello\n") {
		t.Errorf("hash = %s, want %s", h1, sha("hello\n"))
	}
	h2, err := s.Put(bytes.Clone(content))
	if err != nil || h2 != h1 {
		t.Fatalf("second Put = %s, %v; want %s", h2, err, h1)
	}

	want := filepath.Join(dir, "blobs", h1[:2], h1)
	if p, err := s.BlobPath(h1); err != nil || p != want {
		t.Errorf("BlobPath = %q, %v; want %q", p, err, want)
	}
	fi, err := os.Stat(want)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("blob mode = %v, want 0600", fi.Mode().Perm())
	}
	// Dedup: one file in the shard, no temporary files left.
	entries, err := os.ReadDir(filepath.Dir(want))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != h1 {
		t.Errorf("shard holds %v, want only %s", entries, h1)
	}

	got, err := s.Get(h1)
	if err != nil || string(got) != "hello\n" {
		t.Errorf("Get = %q, %v", got, err)
	}
	empty, err := s.Put(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(empty); err != nil || len(got) != 0 {
		t.Errorf("Get(empty) = %q, %v", got, err)
	}
}

func TestStoreGetErrors(t *testing.T) {
	dir := t.TempDir()
	s := checkpoint.NewStore(dir, 0)
	h, err := s.Put([]byte("original"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.BlobPath(h)
	corrupt, err := s.Put([]byte("to be corrupted"))
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := s.BlobPath(corrupt)
	if err := os.WriteFile(cp, []byte("torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		hash string
		want error
	}{
		{"missing", h, checkpoint.ErrBlobMissing},
		{"corrupt", corrupt, checkpoint.ErrBlobMissing},
		{"never stored", sha("never"), checkpoint.ErrBlobMissing},
		{"traversal", "../../etc/passwd", checkpoint.ErrInvalidHash},
		{"uppercase", strings.ToUpper(h), checkpoint.ErrInvalidHash},
		{"short", h[:10], checkpoint.ErrInvalidHash},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Get(tt.hash); !errors.Is(err, tt.want) {
				t.Errorf("Get err = %v, want %v", err, tt.want)
			}
		})
	}

	// Put repairs a torn blob of the same content.
	if _, err := s.Put([]byte("to be corrupted")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(corrupt); err != nil || string(got) != "to be corrupted" {
		t.Errorf("Get after repair = %q, %v", got, err)
	}
}

// TestStoreAtomic writes the same and different large blobs from many
// goroutines while others read the final paths: a blob that can be read at
// all is complete.
func TestStoreAtomic(t *testing.T) {
	s := checkpoint.NewStore(t.TempDir(), 0)
	const n = 8
	contents := make([][]byte, n)
	paths := make([]string, n)
	for i := range contents {
		contents[i] = bytes.Repeat([]byte(fmt.Sprintf("blob %d\n", i%3)), 64<<10)
		paths[i], _ = s.BlobPath(sha(string(contents[i])))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := range n {
		wg.Go(func() {
			for range 4 {
				if _, err := s.Put(contents[i]); err != nil {
					errs <- err
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				b, err := os.ReadFile(paths[i])
				if err == nil && !bytes.Equal(b, contents[i]) {
					errs <- fmt.Errorf("partial blob visible: %d of %d bytes", len(b), len(contents[i]))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range n {
		if got, err := s.Get(sha(string(contents[i]))); err != nil || !bytes.Equal(got, contents[i]) {
			t.Errorf("blob %d: %v", i, err)
		}
	}
	// Only blobs remain (three distinct contents), no temporaries.
	var names []string
	filepath.WalkDir(filepath.Dir(filepath.Dir(paths[0])), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, d.Name())
		}
		return nil
	})
	if len(names) != 3 {
		t.Errorf("store holds %v, want 3 blobs", names)
	}
}

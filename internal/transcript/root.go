package transcript

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// TempRoot creates a fresh directory named prefix-<16 hex digits> in the
// system's temporary directory (links resolved), so its path has the same
// length in every run with a prefix of the same length: the fake model
// estimates tokens from the characters of the request, which include the
// cwd, and a name of varying length would change the usage numbers of a
// transcript. The golden tests use "ama-golden", the replay kit
// "ama-replay". Remove it with RemoveAll.
func TempRoot(prefix string) (string, error) {
	base := os.TempDir()
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	for {
		dir := filepath.Join(base, fmt.Sprintf("%s-%016x", prefix, rand.Uint64()))
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", fmt.Errorf("temporary root: %w", err)
		}
	}
}

// RemoveAll removes dir, making read-only directories writable first (a
// run may leave some behind).
func RemoveAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

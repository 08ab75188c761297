package checkpoint

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// DefaultMaxFileBytes is the size cap used when NewStore gets a cap ≤ 0:
// larger files are recorded as skipped "too_large" (the reference's 5 MiB).
const DefaultMaxFileBytes int64 = 5 << 20

var (
	// ErrBlobMissing: the blob is not in the store (or its content no
	// longer matches its hash). Restore reports it as "backup_missing".
	ErrBlobMissing = errors.New("blob missing")
	// ErrInvalidHash: the hash is not 64 lowercase hex digits.
	ErrInvalidHash = errors.New("invalid blob hash")
)

// Store is a content-addressed blob store, <dir>/blobs/<hash[:2]>/<hash>,
// where hash is the lowercase hex SHA-256 of the content. Blobs are written
// with mode 0600 (directories 0700) through a temporary file and a rename,
// so a blob is either absent or complete. Store holds no mutable state and
// is safe for concurrent use, also by several processes sharing dir.
type Store struct {
	blobs string
	max   int64
}

// NewStore returns the store under dir. The session should pass
// <dataDir>/file-history so blobs land where the reference keeps them
// (<dataDir>/file-history/blobs/…). maxFileBytes ≤ 0 means
// DefaultMaxFileBytes.
func NewStore(dir string, maxFileBytes int64) *Store {
	if maxFileBytes <= 0 {
		maxFileBytes = DefaultMaxFileBytes
	}
	return &Store{blobs: filepath.Join(dir, "blobs"), max: maxFileBytes}
}

// MaxFileBytes is the size cap of Snapshot.
func (s *Store) MaxFileBytes() int64 { return s.max }

// BlobPath is where the blob with this hash lives (whether or not it
// exists). It fails with ErrInvalidHash for anything but 64 lowercase hex
// digits, so a hash from a session file can never name another path.
func (s *Store) BlobPath(hash string) (string, error) {
	if !validHash(hash) {
		return "", fmt.Errorf("%w: %q", ErrInvalidHash, hash)
	}
	return filepath.Join(s.blobs, hash[:2], hash), nil
}

// Put stores data and returns its hash. Content already present is not
// written again; its modification time is refreshed so that a future
// age-based clean-up does not remove a blob that was just referenced.
func (s *Store) Put(data []byte) (string, error) {
	return s.put(data, hashBytes(data))
}

// put is Put with the hash of data already computed.
func (s *Store) put(data []byte, hash string) (string, error) {
	target, _ := s.BlobPath(hash)
	if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		now := time.Now()
		_ = os.Chtimes(target, now, now)
		return hash, nil
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("put blob: %w", err)
	}
	f, err := os.CreateTemp(dir, hash+".tmp-*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("put blob: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("put blob: %w", err)
	}
	return hash, nil
}

// Get returns the content of a blob. A blob that is absent, or whose
// content does not hash to its name (a torn write after a crash), is
// ErrBlobMissing.
func (s *Store) Get(hash string) ([]byte, error) {
	p, err := s.BlobPath(hash)
	if err != nil {
		return nil, err
	}
	// Regular files only (a FIFO planted here would block a rewind); the
	// content is checked against its hash below, so a blob swapped for a
	// link cannot bring another file's content back.
	data, err := ownfs.ReadUser(p, 1<<40)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrBlobMissing, hash)
	}
	if err != nil {
		return nil, fmt.Errorf("get blob: %w", err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hash {
		return nil, fmt.Errorf("%w: %s is corrupt", ErrBlobMissing, hash)
	}
	return data, nil
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func hashBytes(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// tempName is a fresh sibling name for base, short enough for NAME_MAX.
func tempName(base string) string {
	if len(base) > 200 {
		base = base[:200]
	}
	return "." + base + ".ama-restore-" + rand.Text()[:10]
}

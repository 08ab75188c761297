package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/armadra/ama-rpc/internal/ownfs"
)

// TrustOptions are the inputs of the trust decision (spec §1.2).
type TrustOptions struct {
	// Flag is true for --trust, false for --no-trust, nil for neither.
	Flag *bool
	// Profile is the profile's trustProject (nil: unset).
	Profile *bool
	// TrustFile is <configDir>/trust.json.
	TrustFile string
	// Dir is the project directory (session cwd), absolute.
	Dir string
}

type trustFile struct {
	Version int          `json:"version"`
	Entries []trustEntry `json:"entries"`
}

type trustEntry struct {
	Path    string `json:"path"`
	Trusted bool   `json:"trusted"`
	At      string `json:"at,omitempty"`
}

// Trusted decides whether the project is trusted: the flag, then the
// profile's trustProject, then the nearest-ancestor entry of trust.json,
// else untrusted (ama-rpc never prompts: it has no terminal).
func Trusted(o TrustOptions) (bool, error) {
	if o.Flag != nil {
		return *o.Flag, nil
	}
	if o.Profile != nil && *o.Profile {
		return true, nil
	}
	if o.TrustFile == "" {
		return false, nil
	}
	data, err := ownfs.ReadUser(o.TrustFile, ownfs.MaxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w: %s: %v", ErrInvalid, o.TrustFile, err)
	}
	var tf trustFile
	if err := json.Unmarshal(data, &tf); err != nil {
		return false, fmt.Errorf("%w: %s: %v", ErrInvalid, o.TrustFile, err)
	}
	best, trusted := -1, false
	dir := canon(o.Dir)
	for _, e := range tf.Entries {
		p := canon(e.Path)
		if p == "" {
			continue
		}
		if dir == p || strings.HasPrefix(dir, strings.TrimSuffix(p, string(filepath.Separator))+string(filepath.Separator)) {
			if len(p) > best {
				best, trusted = len(p), e.Trusted
			}
		}
	}
	return trusted, nil
}

func canon(p string) string {
	if p == "" {
		return ""
	}
	p = filepath.Clean(p)
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		p = strings.ToLower(p)
	}
	return p
}

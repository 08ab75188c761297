package printmode

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/armadra/ama-rpc/internal/ownfs"
	"github.com/armadra/ama-rpc/internal/secrets"
	"github.com/armadra/ama-rpc/llm"
)

// MaxImageBytes bounds one attached image (ama-rpc does not resize: a
// larger image is refused, exit 2).
const MaxImageBytes = 20 << 20

// ErrImage is an image that cannot be attached (usage error, exit 2).
var ErrImage = errors.New("image")

// imageExts are the file names a prompt word "@path" attaches.
var imageExts = []string{".png", ".jpg", ".jpeg", ".gif", ".webp"}

// ImagePaths are the images a run attaches: the --image files, then the
// prompt words "@path" whose path names an image file (the word stays in
// the text). Only the command line's words count: "@" in piped stdin is
// text, so piped content cannot make ama-rpc read a file.
func ImagePaths(flagImages, words []string) []string {
	out := slices.Clone(flagImages)
	for _, w := range words {
		if p, ok := strings.CutPrefix(w, "@"); ok && p != "" && slices.Contains(imageExts, strings.ToLower(filepath.Ext(p))) {
			out = append(out, p)
		}
	}
	return out
}

// AcceptsImages is an ErrImage when model (nil: unknown) does not take
// image input.
func AcceptsImages(model *llm.Model) error {
	if model != nil && slices.Contains(model.Input, "image") {
		return nil
	}
	name := "the model"
	if model != nil {
		name = model.Provider + "/" + model.ID
	}
	return fmt.Errorf("%w: %s does not accept image input", ErrImage, name)
}

// LoadImages reads the images (relative paths from cwd) for model. A model
// without image input, a missing, oversize or non-image file, or a
// credential path is an ErrImage.
func LoadImages(paths []string, cwd string, model *llm.Model) ([]*llm.ImageContent, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if err := AcceptsImages(model); err != nil {
		return nil, err
	}
	out := make([]*llm.ImageContent, 0, len(paths))
	for _, p := range paths {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(cwd, abs)
		}
		abs = filepath.Clean(abs)
		if why := secrets.Reason(abs); why != "" {
			return nil, fmt.Errorf("%w: %s is not attached (%s)", ErrImage, p, why)
		}
		b, err := ownfs.ReadUser(abs, MaxImageBytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrImage, p, err)
		}
		mime := http.DetectContentType(b)
		if !strings.HasPrefix(mime, "image/") {
			return nil, fmt.Errorf("%w: %s is not an image (%s)", ErrImage, p, mime)
		}
		out = append(out, llm.Image(base64.StdEncoding.EncodeToString(b), mime))
	}
	return out, nil
}

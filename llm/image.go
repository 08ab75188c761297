package llm

import (
	"encoding/base64"
	"fmt"
	"io"
	"strings"
)

// ImageMimeTypes are the image types a prompt may carry (the ones the
// supported providers accept).
var ImageMimeTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// ValidateImage checks an image given by a host before a run starts: a
// supported mimeType and data that is standard base64 (padding required,
// no whitespace, no data: URL prefix). It decodes in a stream, so a large
// image costs no second copy.
func ValidateImage(data, mimeType string) error {
	ok := false
	for _, m := range ImageMimeTypes {
		if mimeType == m {
			ok = true
			break
		}
	}
	if !ok {
		return fmt.Errorf("mimeType %q is not one of %s", mimeType, strings.Join(ImageMimeTypes, ", "))
	}
	if data == "" {
		return fmt.Errorf("data is empty")
	}
	if len(data)%4 != 0 {
		return fmt.Errorf("data is not base64 (length %d is not a multiple of 4)", len(data))
	}
	if _, err := io.Copy(io.Discard, base64.NewDecoder(base64.StdEncoding, strings.NewReader(data))); err != nil {
		return fmt.Errorf("data is not base64: %v", err)
	}
	return nil
}

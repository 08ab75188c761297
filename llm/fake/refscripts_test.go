package fake

import (
	"path/filepath"
	"testing"
)

// ama's own fake scripts (read from ../shared, never copied) parse.
func TestReferenceScriptsParse(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/reference/ama-goldens/scripts/*.json")
	if len(files) == 0 {
		t.Skip("reference scripts not available")
	}
	for _, f := range files {
		if _, err := LoadScript(f); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}

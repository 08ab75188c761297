package golden_test

import (
	"os/exec"
	"strings"
	"testing"
)

// What ama-rpc links it initialises at every start, before main. Packages
// whose init is expensive stay out of the server binary (issue 37):
// santhosh-tekuri/jsonschema compiles five drafts' meta-schemas in its
// init (1.7 MB, 21,000 allocations); the tests that validate wire lines
// against docs/schema keep it (rpc/schema/schemacheck).
func TestArchStartupDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "../cmd/ama-rpc").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, heavy := range []string{"github.com/santhosh-tekuri/jsonschema", "github.com/armadra/ama-rpc/rpc/schema/schemacheck"} {
			if pkg == heavy || strings.HasPrefix(pkg, heavy+"/") {
				t.Errorf("cmd/ama-rpc links %s, whose package initialisation every start pays", pkg)
			}
		}
	}
}

package session

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every store.CustomEntry call of the package writes a kind CustomKinds
// lists (or one whose data is not the session's, named below).
func TestCustomKindsComplete(t *testing.T) {
	listed := map[string]bool{"CustomSeq": true, "CustomApproval": true, "CustomApprovalResolved": true, "CustomPermissionMode": true,
		"customCheckpoint": true, "customCheckpointTrack": true, "customTrace": true,
		"plan.CustomPlan": true, "plan.CustomPlanState": true, "plan.CustomTodo": true}
	if len(listed) != len(CustomKinds()) {
		t.Fatalf("CustomKinds has %d kinds, the test knows %d", len(CustomKinds()), len(listed))
	}
	notOurs := map[string]string{
		"customType":           "AppendCustom: a host extension's or a tool's own entry",
		"store.TaskCustomType": "a task child's first entry: its data comes from the task registry (Deps.TaskData)",
	}
	call := regexp.MustCompile(`store\.CustomEntry\(([\w.]+),`)
	files, _ := filepath.Glob("*.go")
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			seen++
			if !listed[m[1]] && notOurs[m[1]] == "" {
				t.Errorf("%s: store.CustomEntry(%s, …) writes a kind CustomKinds does not list", f, m[1])
			}
		}
	}
	if seen == 0 {
		t.Fatal("no store.CustomEntry call found")
	}
}

package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// snapshot is the committed schema the diff check compares with (also
// the published copy for hosts).
const (
	snapshot   = "../../docs/schema/" + FileName
	changesDoc = "../../docs/schema/CHANGES.md"
)

func load(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, b)
}

func parse(t *testing.T, b []byte) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// The schema-diff check: the generated schema against the committed
// snapshot. Breaking changes of stable definitions fail unless the
// protocol version changed and docs/schema/CHANGES.md names them;
// additions pass (the snapshot is then only stale). UPDATE_GOLDEN=1
// rewrites the snapshot.
func TestSchemaSnapshot(t *testing.T) {
	cur, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if _, err := Write(filepath.Dir(snapshot)); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(snapshot)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 go test ./rpc/schema -run Snapshot writes it)", err)
	}
	changes, err := os.ReadFile(changesDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Gate(parse(t, old), parse(t, cur), string(changes)) {
		t.Error(e)
	}
	if !bytes.Equal(old, cur) {
		t.Logf("%s is stale (additions only): UPDATE_GOLDEN=1 go test ./rpc/schema -run Snapshot rewrites it", snapshot)
	}
}

// The fixture pair: a removed stable member fails the check at the same
// protocol version, and at a new version until the Changes section names
// it.
func TestGateRemovedField(t *testing.T) {
	old := load(t, "testdata/diff/old.schema.json")
	cur := load(t, "testdata/diff/removed-field.schema.json")
	breaks := Breaking(old, cur)
	if len(breaks) != 1 || breaks[0].Subject != "agent_end.willRetry" {
		t.Fatalf("breaks %v, want agent_end.willRetry removed", breaks)
	}
	if errs := Gate(old, cur, ""); len(errs) != 1 || !strings.Contains(errs[0], "agent_end.willRetry") {
		t.Errorf("same version: %v", errs)
	}
	cur.Extra["x-protocolVersion"] = 2.0
	if errs := Gate(old, cur, "## Changes\n### Protocol version 2\n- nothing said\n"); len(errs) != 1 {
		t.Errorf("version 2, not named: %v", errs)
	}
	if errs := Gate(old, cur, "## Changes\n### Protocol version 1\n- agent_end.willRetry removed\n"); len(errs) != 1 {
		t.Errorf("version 2, named under version 1: %v", errs)
	}
	if errs := Gate(old, cur, "## Changes\n### Protocol version 12\n- agent_end.willRetry\n### Protocol version 2\n- `agent_end.willRetry` is gone\n"); len(errs) != 0 {
		t.Errorf("version 2, named: %v", errs)
	}
}

// Each kind of break, and what is not one.
func TestBreaking(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(s *jsonschema.Schema)
		want   string // "" = no break
	}{
		{"unchanged", func(*jsonschema.Schema) {}, ""},
		{"enum value removed", func(s *jsonschema.Schema) {
			s.Defs["response"].Properties["code"].Enum = []any{"busy"}
		}, `response.code "aborted"`},
		{"enum value added", func(s *jsonschema.Schema) {
			s.Defs["response"].Properties["code"].Enum = append(s.Defs["response"].Properties["code"].Enum, "cursor_expired")
		}, ""},
		{"optional made required", func(s *jsonschema.Schema) {
			s.Defs["agent_end"].Required = append(s.Defs["agent_end"].Required, "willRetry")
		}, "agent_end.willRetry"},
		{"member added", func(s *jsonschema.Schema) {
			s.Defs["agent_end"].Properties["seq"] = &jsonschema.Schema{Type: "integer"}
		}, ""},
		{"definition added", func(s *jsonschema.Schema) {
			s.Defs["permission_resolved"] = &jsonschema.Schema{Type: "object"}
		}, ""},
		{"type changed", func(s *jsonschema.Schema) {
			s.Defs["agent_end"].Properties["willRetry"].Type = "string"
		}, "agent_end.willRetry"},
		{"stable definition removed", func(s *jsonschema.Schema) { delete(s.Defs, "agent_end") }, "agent_end"},
		{"experimental member removed", func(s *jsonschema.Schema) {
			delete(s.Defs["cache_miss"].Properties, "reason")
		}, ""},
		{"requirement relaxed", func(s *jsonschema.Schema) { s.Defs["agent_end"].Required = []string{"type"} }, ""},
	} {
		old := load(t, "testdata/diff/old.schema.json")
		cur := load(t, "testdata/diff/old.schema.json")
		tc.change(cur)
		breaks := Breaking(old, cur)
		switch {
		case tc.want == "" && len(breaks) > 0:
			t.Errorf("%s: breaks %v", tc.name, breaks)
		case tc.want != "" && (len(breaks) != 1 || breaks[0].Subject != tc.want):
			t.Errorf("%s: breaks %v, want %s", tc.name, breaks, tc.want)
		}
	}
}

// On the real document: removing a stable member of a command's data and
// an event's member is caught; the document compared with itself is not.
func TestBreakingGenerated(t *testing.T) {
	b, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	// Two parses (Breaking changes neither; each parse is a large share
	// of the package's CPU under -race).
	old, cur := parse(t, b), parse(t, b)
	if br := Breaking(old, cur); len(br) != 0 {
		t.Fatalf("the document against itself: %v", br)
	}
	delete(cur.Defs[DataDef("get_state")].Properties, "model")
	delete(cur.Defs["agent_end"].Properties, "willRetry")
	cur.Defs["command"].Properties["type"].Enum = cur.Defs["command"].Properties["type"].Enum[1:]
	got := map[string]bool{}
	for _, br := range Breaking(old, cur) {
		got[br.Subject] = true
	}
	first := old.Defs["command"].Properties["type"].Enum[0]
	for _, want := range []string{DataDef("get_state") + ".model", "agent_end.willRetry", "command.type " + jsonText(first)} {
		if !got[want] {
			t.Errorf("%s not reported (got %v)", want, got)
		}
	}
}

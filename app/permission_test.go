package app

import (
	"errors"
	"path/filepath"
	"testing"

	"go.uber.org/zap"

	"github.com/armadra/ama-rpc/approvals"
	"github.com/armadra/ama-rpc/config"
	"github.com/armadra/ama-rpc/session"
)

// The gate configuration: a project only tightens shadow to enforce, the
// log path is the user's and absolute, bad values are config errors.
func TestPermissionGate(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "permission.log")
	for _, tc := range []struct {
		name          string
		user, project config.Permission
		gate          string
		err           bool
		logging       bool
	}{
		{"defaults", config.Permission{}, config.Permission{}, session.GateEnforce, false, false},
		{"user shadow", config.Permission{Gate: "shadow"}, config.Permission{}, session.GateShadow, false, false},
		{"project tightens", config.Permission{Gate: "shadow"}, config.Permission{Gate: "enforce"}, session.GateEnforce, false, false},
		{"project cannot loosen", config.Permission{Gate: "enforce"}, config.Permission{Gate: "off"}, session.GateEnforce, false, false},
		{"project cannot enable shadow", config.Permission{Gate: "off"}, config.Permission{Gate: "shadow"}, session.GateOff, false, false},
		{"bad gate", config.Permission{Gate: "warn"}, config.Permission{}, "", true, false},
		{"relative log", config.Permission{LogPath: "permission.log"}, config.Permission{}, "", true, false},
		{"user log", config.Permission{LogPath: abs}, config.Permission{}, session.GateEnforce, false, true},
		{"project log ignored", config.Permission{}, config.Permission{LogPath: abs}, session.GateEnforce, false, false},
		{"bad candidate mode", config.Permission{Candidate: &config.Candidate{Mode: "yolo"}}, config.Permission{}, "", true, false},
		{"negative maxRejections", config.Permission{MaxRejections: -1}, config.Permission{}, "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deps := &session.Deps{Policy: &approvals.Policy{Mode: approvals.ModeDefault}}
			err := permissionGate(deps, &config.Config{Permission: tc.user}, &config.Config{Permission: tc.project}, zap.NewNop())
			defer deps.Decisions.Close()
			if tc.err {
				if !errors.Is(err, config.ErrInvalid) {
					t.Fatalf("err %v, want a config error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if deps.Settings.PermissionGate != tc.gate || (deps.Decisions != nil) != tc.logging {
				t.Errorf("gate %q logging %v", deps.Settings.PermissionGate, deps.Decisions != nil)
			}
		})
	}
}

// The classifier's settings: lists with $defaults, a reasoning level, the
// stage limits; bad values are configuration errors; a project's are
// ignored.
func TestClassifierSettings(t *testing.T) {
	for _, tc := range []struct {
		name          string
		user, project config.Permission
		err           bool
		check         func(*session.Settings) bool
	}{
		{"defaults", config.Permission{}, config.Permission{}, false, func(s *session.Settings) bool {
			return s.ClassifierPolicy == nil && s.ClassifierReasoning == "" && s.ClassifierFastTokens == 0
		}},
		{"lists", config.Permission{ClassifierLists: &config.ClassifierLists{HardDeny: []string{"$defaults", "no prod"}}}, config.Permission{}, false,
			func(s *session.Settings) bool {
				return s.ClassifierPolicy != nil && len(s.ClassifierPolicy.HardDeny) == 5 && len(s.ClassifierPolicy.SoftDeny) == 5
			}},
		{"reasoning and limits", config.Permission{ClassifierReasoningLevel: "low", FastClassifierMaxTokens: 2048}, config.Permission{}, false,
			func(s *session.Settings) bool {
				return s.ClassifierReasoning == "low" && s.ClassifierFastTokens == 2048
			}},
		{"project ignored", config.Permission{}, config.Permission{ClassifierLists: &config.ClassifierLists{HardDeny: []string{}}, ClassifierReasoningLevel: "max"}, false,
			func(s *session.Settings) bool { return s.ClassifierPolicy == nil && s.ClassifierReasoning == "" }},
		{"bad level", config.Permission{ClassifierReasoningLevel: "max"}, config.Permission{}, true, nil},
		{"fast limit too small", config.Permission{FastClassifierMaxTokens: 8}, config.Permission{}, true, nil},
		{"empty entry", config.Permission{ClassifierLists: &config.ClassifierLists{Allow: []string{""}}}, config.Permission{}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deps := &session.Deps{Policy: &approvals.Policy{Mode: approvals.ModeDefault}}
			err := permissionGate(deps, &config.Config{Permission: tc.user}, &config.Config{Permission: tc.project}, zap.NewNop())
			if tc.err != (err != nil) || (err != nil && !errors.Is(err, config.ErrInvalid)) {
				t.Fatalf("err %v, want error %v", err, tc.err)
			}
			if tc.check != nil && !tc.check(&deps.Settings) {
				t.Errorf("settings %+v", deps.Settings)
			}
		})
	}
}

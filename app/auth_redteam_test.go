package app

import (
	"os"
	"path/filepath"
	"testing"
)

// An auth file's keys are data: "!command", "$(command)" and backquotes
// never run (the marker files stay absent), "$VAR" names one variable and
// is read only while keys may come from the environment.
func TestAuthKeysNeverRun(t *testing.T) {
	dir := t.TempDir()
	m1, m2, m3 := filepath.Join(dir, "m1"), filepath.Join(dir, "m2"), filepath.Join(dir, "m3")
	file := filepath.Join(dir, "auth.json")
	body := `{"version":1,"providers":{
		"a":{"apiKey":"!touch ` + m1 + `"},
		"b":{"apiKey":"$(touch ` + m2 + `)"},
		"c":{"apiKey":"` + "`touch " + m3 + "`" + `"},
		"d":{"apiKey":"${SECRET}"},
		"e":{"apiKey":"$SECRET$OTHER"}}}`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var asked []string
	getenv := func(k string) string {
		asked = append(asked, k)
		return map[string]string{"SECRET": "s3"}[k]
	}
	for _, useEnv := range []bool{true, false} {
		asked = nil
		keys, warnings, err := authKeys(file, getenv, useEnv)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{m1, m2, m3} {
			if _, err := os.Stat(m); err == nil {
				t.Fatalf("%s exists: an auth key ran a command", m)
			}
		}
		if _, ok := keys["a"]; ok || len(warnings) != 1 {
			t.Errorf("!command key: %q, warnings %q", keys["a"], warnings)
		}
		if _, ok := keys["b"]; ok {
			t.Errorf("$(…) key resolved to %q", keys["b"])
		}
		if keys["c"] != "`touch "+m3+"`" {
			t.Errorf("a backquoted key is literal: %q", keys["c"])
		}
		if want := map[bool]string{true: "s3", false: ""}[useEnv]; keys["d"] != want {
			t.Errorf("useEnv %v: ${SECRET} = %q, want %q", useEnv, keys["d"], want)
		}
		if _, ok := keys["e"]; ok {
			t.Errorf("$SECRET$OTHER expanded to %q", keys["e"])
		}
		if !useEnv && len(asked) != 0 {
			t.Errorf("authEnv false read the environment: %v", asked)
		}
	}
}

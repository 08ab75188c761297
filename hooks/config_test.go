package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseErrorsNameFileAndPath(t *testing.T) {
	cases := []struct{ doc, want string }{
		{`{`, "f.json: invalid JSON"},
		{`[]`, "f.json: must be a JSON object"},
		{`{"hooks":{}}`, "f.json: version: required"},
		{`{"version":2}`, "f.json: version: must be 1"},
		{`{"version":1,"hooks":{"Nope":[]}}`, "f.json: hooks.Nope: unknown event"},
		{`{"version":1,"hooks":{"PreToolUse":[{"matcher":"/(/","hooks":[]}]}}`, "f.json: hooks.PreToolUse[0].matcher: invalid regular expression"},
		{`{"version":1,"hooks":{"Stop":[{"matcher":"/(/","hooks":[]}]}}`, "f.json: hooks.Stop[0].matcher:"},
		{`{"version":1,"hooks":{"Stop":[{"hooks":[{"type":"shell","command":"x"}]}]}}`, "f.json: hooks.Stop[0].hooks[0].type:"},
		{`{"version":1,"hooks":{"Stop":[{"hooks":[{"type":"command"}]}]}}`, "f.json: hooks.Stop[0].hooks[0].command: required"},
		{`{"version":1,"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeoutMs":"5"}]}]}}`, "hooks.Stop[0].hooks[0].timeoutMs:"},
		{`{"version":1,"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","extra":1}]}]}}`, "hooks.Stop[0].hooks[0].extra: unknown key"},
		{`{"version":1,"hooks":{"Stop":[{}]}}`, "hooks.Stop[0].hooks: must be an array"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.doc), "f.json", "user")
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.doc, err, c.want)
		}
	}
}

func TestFlatteningOrder(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	user := write("user.json", `{"version":1,"hooks":{"Stop":[{"hooks":[{"type":"command","command":"u-stop"}]}],
		"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"u1"},{"type":"command","command":"u2"}]},{"hooks":[{"type":"command","command":"u3"}]}]}}`)
	prof := write("prof.json", `{"version":1,"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"p1"}]}]}}`)
	proj := write("proj.json", `{"version":1,"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"j1"}]}]}}`)
	set, warn, err := Load(Layers{User: user, Profile: prof, Project: proj, Trusted: true})
	if err != nil || len(warn) != 0 {
		t.Fatal(err, warn)
	}
	var got []string
	for _, c := range set.Commands(PreToolUse) {
		got = append(got, c.Source+":"+c.Command)
	}
	if strings.Join(got, ",") != "user:u1,user:u2,user:u3,profile:p1,project:j1" {
		t.Fatalf("order = %v", got)
	}
	if len(set.Commands(Stop)) != 1 {
		t.Fatal("stop hook lost")
	}
	// A missing profile file is an error; a missing user file is not.
	if _, _, err := Load(Layers{User: filepath.Join(dir, "none"), Profile: filepath.Join(dir, "none2")}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("missing profile hooksFile: %v", err)
	}
}

// Checklist 10: an untrusted project's broken file is not parsed (warning
// naming it); trusted, it is an error.
func TestUntrustedProjectNotParsed(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "hooks.json")
	if err := os.WriteFile(p, []byte(`{broken`), 0o644); err != nil {
		t.Fatal(err)
	}
	set, warn, err := Load(Layers{Project: p})
	if err != nil || set.Len() != 0 || len(warn) != 1 || !strings.Contains(warn[0], p) {
		t.Fatalf("untrusted: %v %v %v", set.Len(), warn, err)
	}
	if _, _, err := Load(Layers{Project: p, Trusted: true}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), p) {
		t.Fatalf("trusted: %v", err)
	}
}

func TestTrustDecision(t *testing.T) {
	dir := t.TempDir()
	tf := filepath.Join(dir, "trust.json")
	os.WriteFile(tf, []byte(`{"version":1,"entries":[{"path":"/w","trusted":true},{"path":"/w/x","trusted":false}]}`), 0o644)
	yes, no := true, false
	cases := []struct {
		o    TrustOptions
		want bool
	}{
		{TrustOptions{Flag: &yes, Dir: "/w/x"}, true},
		{TrustOptions{Flag: &no, Profile: &yes, Dir: "/w"}, false},
		{TrustOptions{Profile: &yes, Dir: "/elsewhere"}, true},
		{TrustOptions{TrustFile: tf, Dir: "/w/a"}, true},
		{TrustOptions{TrustFile: tf, Dir: "/w/x/y"}, false},
		{TrustOptions{TrustFile: tf, Dir: "/wx"}, false},
		{TrustOptions{TrustFile: filepath.Join(dir, "none"), Dir: "/w"}, false},
	}
	for i, c := range cases {
		if got, err := Trusted(c.o); err != nil || got != c.want {
			t.Errorf("%d: %v %v", i, got, err)
		}
	}
}

func TestTimeoutClamp(t *testing.T) {
	cases := []struct {
		ms   float64
		want time.Duration
	}{{0, time.Minute}, {0.5, time.Millisecond}, {1500.7, 1500 * time.Millisecond}, {1e9, 600 * time.Second}}
	for _, c := range cases {
		if got := (&Command{TimeoutMs: c.ms}).Timeout(DefaultTimeout); got != c.want {
			t.Errorf("%v: %v", c.ms, got)
		}
	}
}

package app

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/store"
)

// --from's value: the id (or its start), then optionally # and a number
// of at least 1; the last # separates them.
func TestParseFrom(t *testing.T) {
	for _, c := range []struct {
		spec string
		id   string
		n    int
		ok   bool
	}{
		{"abc", "abc", 0, true},
		{"abc#2", "abc", 2, true},
		{"abc#010", "abc", 10, true},
		{"a#b#3", "a#b", 3, true},
		{"abc#0", "", 0, false},
		{"abc#", "", 0, false},
		{"abc#-1", "", 0, false},
		{"abc#+1", "", 0, false},
		{"abc#1x", "", 0, false},
		{"abc#99999999999999999999", "", 0, false},
		{"#2", "", 0, false},
		{" #2", "", 0, false},
		{"", "", 0, false},
		{"  ", "", 0, false},
	} {
		id, n, ok := parseFrom(c.spec)
		if id != c.id || n != c.n || ok != c.ok {
			t.Errorf("parseFrom(%q) = %q, %d, %v; want %q, %d, %v", c.spec, id, n, ok, c.id, c.n, c.ok)
		}
	}
}

// A session id or its start: an exact id wins over a longer id it
// starts; a start that fits one session finds it in any directory; one
// that fits several is an error; glob characters match nothing.
func TestFindSessionFile(t *testing.T) {
	root := t.TempDir()
	cwd := "/p/here"
	put := func(dir, id string) string {
		p := filepath.Join(root, dir, "2026-01-01T00-00-00-000Z_"+id+store.FileSuffix)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	here := store.EncodeCwd(cwd)
	abc := put(here, "abc")
	abcd := put("other", "abcd")
	xyz := put("other", "xyz1")
	long := put("third", "qrs-0000-4000")
	put(".trash", "trashed1")
	put("other", "xyz2")
	under := put("other", "u_v9") // an id with '_': the name's id follows its first '_'
	for _, c := range []struct {
		id   string
		want string
		err  error // nil: found; else errors.Is (or any error for errAny)
	}{
		{"abc", abc, nil},
		{"abcd", abcd, nil},
		{"abc", abc, nil}, // exact, though abcd starts with it too
		{"qrs", long, nil},
		{"qrs-0000", long, nil},
		{"xyz1", xyz, nil},
		{"xy", "", errAny},
		{"u_v9", under, nil},
		{"v9", "", store.ErrNotFound}, // not session u_v9's, whose name ends so
		{"trash", "", store.ErrNotFound},
		{"nosuch", "", store.ErrNotFound},
		{"*", "", store.ErrNotFound},
		{"ab?", "", store.ErrNotFound},
		{"../other/x", "", store.ErrNotFound},
	} {
		got, err := findSessionFile(root, cwd, c.id)
		switch {
		case c.err == nil && (err != nil || got != c.want):
			t.Errorf("%q: %q, %v; want %q", c.id, got, err, c.want)
		case c.err == errAny && err == nil:
			t.Errorf("%q: %q, want an error", c.id, got)
		case c.err != nil && c.err != errAny && !errors.Is(err, c.err):
			t.Errorf("%q: %q, %v; want %v", c.id, got, err, c.err)
		}
	}
	if got, err := findSessionFile(root, cwd, "ab"); err == nil {
		t.Errorf("ab fits abc and abcd, found %q", got)
	}
}

var errAny = errors.New("any error")

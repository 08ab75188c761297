package app

import (
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/config"
)

// sessionsDir: the flag, else the profile's, else the user config's, else
// <data>/sessions, for the server, `sessions list` and `explain` alike.
func TestSessionsDirPrecedence(t *testing.T) {
	paths := config.Paths{Data: "/data"}
	user := &config.Config{SessionDir: "/user"}
	prof := &Profile{SessionDir: "/profile"}
	for _, c := range []struct {
		user *config.Config
		prof *Profile
		flag string
		want string
	}{
		{nil, nil, "", filepath.Join("/data", "sessions")},
		{&config.Config{}, &Profile{}, "", filepath.Join("/data", "sessions")},
		{user, nil, "", "/user"},
		{user, prof, "", "/profile"},
		{user, prof, "/flag", "/flag"},
		{nil, nil, "/flag", "/flag"},
	} {
		if got := sessionsDir(paths, c.user, c.prof, c.flag); got != c.want {
			t.Errorf("user %v profile %v flag %q: %q, want %q", c.user != nil, c.prof != nil, c.flag, got, c.want)
		}
	}
}

//go:build linux

package sandbox

import (
	"os"
	"testing"

	"github.com/armadra/ama-rpc/internal/childenv"
)

// BenchmarkLauncherKey is ama-rpc's share of a call through a pre-started
// launcher before anything is sent: the check that the jail is unchanged
// (zygoteFor: the sockets found now, the plan with its stats, the rules'
// inputs), and its two largest parts, for the user's real HOME.
func BenchmarkLauncherKey(b *testing.B) {
	home, _ := os.UserHomeDir()
	self, _ := os.Executable()
	rt := New(Settings{Enabled: true, Bash: true, NetworkDenied: true}, self, Dirs{Home: home, Temp: b.TempDir()})
	if !rt.Active() || !rt.status.Namespaces {
		b.Skip("no jail")
	}
	defer rt.CloseLaunchers()
	c := rt.For(b.TempDir(), "", false)
	p := c.policy
	p.Namespaces = true
	env := commandEnv(os.Environ(), p)
	lenv := childenv.Environ(childenv.Policy{})
	b.Run("sockets", func(b *testing.B) {
		for b.Loop() {
			jailSockets(p, lenv, env)
		}
	})
	p.Sockets = jailSockets(p, lenv, env)
	b.Run("plan", func(b *testing.B) {
		for b.Loop() {
			jailPlan(p, true)
		}
	})
	b.Run("zygoteFor", func(b *testing.B) {
		for b.Loop() {
			if _, err := rt.zygoteFor(c.policy, env); err != nil {
				b.Fatal(err)
			}
		}
	})
}

//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJailAttackVariations re-runs the attacks in forms the other
// tests do not: through a user namespace of the command's own, through
// /proc's root links, through links and renames, and against processes
// outside. Each case checks its side effect after the command ended.
func TestJailAttackVariations(t *testing.T) {
	w := newWorld(t)
	rt := runtimeFor(t, bashSettings, w)
	if !rt.Status().Namespaces {
		t.Skipf("no user namespaces: %s", rt.Status().Detail)
	}
	c := rt.For(w.project, "", false)
	outsideDir := filepath.Join(w.root, "outside")
	if err := os.MkdirAll(outsideDir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(outsideDir, "f")
	writeFile(t, f, "original\n")
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(f, old, old); err != nil {
		t.Fatal(err)
	}
	// A process outside the sandbox, with a secret on its command line.
	victim := exec.Command("/bin/sh", "-c", "read x # VICTIM-SECRET-ARG")
	vin, err := victim.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { vin.Close(); _ = victim.Wait() }()
	secret := "PRIVATE KEY"
	ssh := filepath.Join(w.home, ".ssh", "id_rsa")
	unchanged := func(t *testing.T, out string) {
		t.Helper()
		b, _ := os.ReadFile(f)
		fi, err := os.Stat(f)
		if err != nil || string(b) != "original\n" || fi.Mode().Perm() != 0o644 || !fi.ModTime().Equal(old) {
			t.Errorf("the file outside changed (%v): %q: %s", fi.Mode(), b, out)
		}
	}
	noSecret := func(t *testing.T, out string) {
		t.Helper()
		if strings.Contains(out, secret) || strings.Contains(out, "VICTIM-SECRET-ARG") {
			t.Errorf("a secret reached the command: %s", out)
		}
	}
	cases := []struct {
		name, script string
		check        func(t *testing.T, out string)
	}{
		{"own user namespace: remount / writable", "unshare -Urm sh -c 'mount -o remount,rw / ; mount -o remount,rw " + outsideDir + "; echo changed > " + f + "' 2>&1", unchanged},
		{"own user namespace: uncover a hidden directory", "unshare -Urm sh -c 'umount -l " + filepath.Dir(ssh) + "; umount -l " + w.home + "; cat " + ssh + "' 2>&1", noSecret},
		{"own user namespace: bind the outside writable", "mkdir -p m; unshare -Urm sh -c 'mount --bind " + outsideDir + " m && echo changed > m/f' 2>&1", unchanged},
		{"own user namespace without an id map", "unshare -Um sh -c 'umount -l " + w.home + "; mount -o remount,rw /; cat " + ssh + "; echo changed > " + f + "' 2>&1", func(t *testing.T, out string) { noSecret(t, out); unchanged(t, out) }},
		{"/proc root links", "cat /proc/self/root" + ssh + " /proc/1/root" + ssh + " 2>&1; echo changed > /proc/1/root" + f + " 2>&1", func(t *testing.T, out string) { noSecret(t, out); unchanged(t, out) }},
		{"processes outside", "cat /proc/*/cmdline 2>/dev/null | tr '\\0' ' '; ps -eo args 2>&1; kill -9 -1; true", func(t *testing.T, out string) {
			noSecret(t, out)
			if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
				t.Errorf("the process outside was killed: %v", err)
			}
		}},
		{"chmod and touch through a link", "ln -s " + f + " l; chmod 777 l; touch -d 2001-01-01 l; ln -s " + outsideDir + " d; chmod 777 d/f; echo changed > l 2>&1", unchanged},
		{"hard link of an outside file", "ln " + f + " hl 2>&1 && echo changed >> hl", unchanged},
		{"rename the project away", "cd .. && mv proj proj-old 2>&1; mv " + w.project + " /tmp/p 2>&1; true", func(t *testing.T, out string) {
			if !exists(w.project) || exists(filepath.Join(w.root, "proj-old")) {
				t.Errorf("the project was moved: %s", out)
			}
		}},
		{"device node", "mknod dev c 1 3 2>&1; mknod " + filepath.Join(outsideDir, "dev") + " c 1 3 2>&1; true", func(t *testing.T, out string) {
			if exists(filepath.Join(w.project, "dev")) || exists(filepath.Join(outsideDir, "dev")) {
				t.Errorf("a device node was made: %s", out)
			}
		}},
		{"shared memory", "echo x > /dev/shm/ama-attack-marker 2>&1; true", func(t *testing.T, out string) {
			if exists("/dev/shm/ama-attack-marker") {
				os.Remove("/dev/shm/ama-attack-marker")
				t.Errorf("/dev/shm is shared: %s", out)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := w.sh(t, c, tc.script)
			t.Logf("%s", out)
			tc.check(t, out)
		})
	}
}

//go:build linux

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMountinfoExt4: a new name is left to the file's fsync (no fsync of
// the directory) only on a device whose every mount is ext4 or ext3.
func TestMountinfoExt4(t *testing.T) {
	const info = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
23 22 0:21 / /proc rw,nosuid - proc proc rw
24 22 0:5 / /dev rw master:2 shared:3 - devtmpfs devtmpfs rw
25 24 0:22 / /dev/shm rw - tmpfs tmpfs rw
26 22 8:1 / /old rw - ext2 /dev/sda1 rw
27 22 8:2 / /three rw - ext3 /dev/sda2 rw,data=ordered
28 22 254:0 /srv /srv rw shared:1 - ext4 /dev/vda rw,discard
29 22 8:3 / /mixed rw - ext4 /dev/sda3 rw
30 22 8:3 / /mixed2 rw - fuseblk /dev/sda3 rw
31 22 8:4 / /cut rw -
`
	for dev, want := range map[string]bool{
		"254:0": true,  // ext4, mounted twice
		"8:2":   true,  // ext3 (the ext4 driver)
		"0:22":  false, // tmpfs
		"8:1":   false, // ext2: maybe the old driver
		"8:3":   false, // ext4 and something else
		"8:4":   false, // no type
		"9:9":   false, // not mounted
		"254":   false,
	} {
		if got := mountinfoExt4([]byte(info), dev); got != want {
			t.Errorf("%s: %v, want %v", dev, got, want)
		}
	}
}

// TestSyncsNewName: the test's own directory is found with the type its
// mount has (findmnt, where it is installed, says which).
func TestSyncsNewName(t *testing.T) {
	dir := t.TempDir()
	fd, err := openAnon(dir)
	if err != nil {
		t.Skipf("no O_TMPFILE here: %v", err)
	}
	defer fd.Close()
	out, err := exec.Command("findmnt", "-n", "-o", "FSTYPE", "--target", dir).Output()
	if err != nil {
		t.Skipf("findmnt: %v", err)
	}
	fstype := strings.TrimSpace(string(out))
	want := fstype == "ext4" || fstype == "ext3"
	if got := syncsNewName(fd); got != want {
		t.Errorf("%s (%s): syncsNewName %v, want %v", dir, fstype, got, want)
	}
}

// TestLinkEmptyPath: linkProc links an open file by AT_EMPTY_PATH where the
// kernel allows it (6.10 on), never falling back to /proc there; a taken
// name fails with fs.ErrExist and a file with no name left with
// fs.ErrNotExist, as through /proc.
func TestLinkEmptyPath(t *testing.T) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Skip(err)
	}
	var major, minor int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor)
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := linkProc(int(f.Fd()), "a", filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b")); err != nil || string(b) != "x" {
		t.Errorf("b = %q, %v", b, err)
	}
	if err := linkProc(int(f.Fd()), "a", filepath.Join(dir, "b")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("link to a taken name: %v", err)
	}
	os.Remove(a)
	os.Remove(filepath.Join(dir, "b"))
	if err := linkProc(int(f.Fd()), "a", filepath.Join(dir, "c")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("link of a file with no name left: %v", err)
	}
	if (major > 6 || major == 6 && minor >= 10) && noEmptyPathLink.Load() {
		t.Errorf("kernel %d.%d: linkat AT_EMPTY_PATH fell back to /proc", major, minor)
	}
}

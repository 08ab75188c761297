package golden_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ownFiles are the files (module-relative) that may open files with the os
// package directly, and why. Everything else that ama-rpc opens on its own
// account goes through internal/ownfs (issue 24: a path a command or the
// model can change is never followed out of where the file must be).
var ownFiles = map[string]string{
	// The tools act for the model: what they open was judged by the
	// permission pipeline on the resolved path, and they open without
	// following a final link themselves.
	"tools/open.go":          "the read/grep tools' open (O_NOFOLLOW, judged path)",
	"tools/readdir_other.go": "the file tools' directory reads",
	"checkpoint/record.go":   "records the model's write targets before the write (O_NOFOLLOW)",
	"checkpoint/store.go":    "content-addressed blobs: a fresh O_EXCL temp file renamed into place; reads go through ownfs and are checked against their hash",
	// Session files: in the sessions directory, one of ama's safety
	// directories (approvals/safety.go: no tool writes it); created
	// O_EXCL and renamed, locked with O_EXCL lock files.
	"store/file.go":          "session files",
	"store/list.go":          "session files",
	"store/lock.go":          "session lock files",
	"store/newfile_other.go": "session lock files and directories to fsync, where newfile_linux.go's open(2) is not at hand",
	"store/newfile_linux.go": "/proc/self/mountinfo, the kernel's list of mounts (no command can change it): is a session directory's file system ext4",
	"store/read.go":          "session files",
	// The sandbox: kernel knobs under /proc/sys and /dev/ptmx (no command
	// can change them), the launcher binary opened to start the self-test
	// through its descriptor; the launcher itself runs inside the jail as
	// the sandboxed command.
	"sandbox/launch_linux.go":            "/proc/sys knobs, /proc/net/unix, /proc/self/fdinfo, /dev/null and /dev/ptmx",
	"tools/bash_launcher.go":             "/dev/null as a sandboxed command's stdin (no path a command can change)",
	"sandbox/canary.go":                  "the launcher binary, started through its descriptor",
	"sandbox/launcher/canary_linux.go":   "runs inside the jail (the self-test probes)",
	"sandbox/launcher/launcher_linux.go": "runs inside the jail",
	// ama-rpc's own git: the files git opens on every call, opened with
	// O_NONBLOCK only to check they are regular (a FIFO would block git);
	// HEAD, commondir and a .git file read bounded (childenv is a leaf).
	"internal/childenv/gitfiles.go": "git's HEAD, index, packed-refs, branch ref: checked non-blocking before git opens them",
	// Test-only code and the scripted test provider.
	"llm/fake/fake.go":   "AMA_FAKE_RECORD, set by the tester",
	"llm/fake/script.go": "AMA_FAKE_SCRIPT, set by the tester",
}

var osOpen = regexp.MustCompile(`\bos\.(ReadFile|WriteFile|Open|Create|OpenFile|CreateTemp)\(`)

// internal/ownfs is the only way ama-rpc opens its own files (see
// ARCHITECTURE.md "Files ama-rpc opens for itself").
func TestArchOwnFilesGoThroughOwnfs(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "golden" || rel == "test" || rel == "internal/ownfs" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		// The pattern runs over the whole file once (per line it cost
		// seconds under -race); each match is judged on its line, the
		// first one of a line only.
		text := string(src)
		last := -1
		for _, m := range osOpen.FindAllStringIndex(text, -1) {
			start := strings.LastIndexByte(text[:m[0]], '\n') + 1
			if start == last {
				continue
			}
			end := strings.IndexByte(text[m[0]:], '\n')
			if end < 0 {
				end = len(text) - m[0]
			}
			line := text[start : m[0]+end]
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			last = start
			if _, ok := ownFiles[rel]; ok {
				seen[rel] = true
				continue
			}
			t.Errorf("%s:%d: %s outside internal/ownfs (open ama-rpc's own files with ownfs; a tool acting for the model goes in ownFiles with its reason)", rel, strings.Count(text[:start], "\n")+1, text[m[0]:m[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for f := range ownFiles {
		if !seen[f] {
			t.Errorf("ownFiles lists %s, which opens nothing with os: remove it", f)
		}
	}
}

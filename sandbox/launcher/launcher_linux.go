//go:build linux

package launcher

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

func init() {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		return
	}
	err := run(os.Args[2:])
	os.Stderr.WriteString("ama-rpc sandbox: " + err.Error() + "\n")
	os.Exit(126)
}

// Constants not in package syscall.
const (
	sysLandlockRestrictSelf = 446 // same number on every architecture
	prSetNoNewPrivs         = 38
	prCapAmbient            = 47
	prCapAmbientClearAll    = 4
	stNoSuid                = 0x2
	stNoDev                 = 0x4
	stNoExec                = 0x8
	stNoAtime               = 0x400
	stNoDirAtime            = 0x800
	stRelAtime              = 0x1000
)

// run applies the sandbox and execs the command; it returns only on
// failure, and then the command has not run.
func run(args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return errors.New("usage: " + Arg + " <path> -- <argv…>")
	}
	path, argv := args[0], args[2:]
	fd, err := strconv.Atoi(os.Getenv(EnvFD))
	if err != nil || fd < 3 {
		return errors.New("no Landlock ruleset was passed")
	}
	flags, _ := strconv.ParseUint(os.Getenv(EnvFlags), 10, 32)
	ns := os.Getenv(EnvNamespaces) == "1"
	mounts := os.Getenv(EnvMounts)
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !isOurs(kv) {
			env = append(env, kv)
		}
	}
	runtime.LockOSThread() // never unlocked: this thread execs
	if ns {
		if err := bindMounts(mounts); err != nil {
			return err
		}
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); e != 0 {
			return errors.New("clear ambient capabilities: " + e.Error())
		}
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return errors.New("no_new_privs: " + e.Error())
	}
	if _, _, e := syscall.RawSyscall(sysLandlockRestrictSelf, uintptr(fd), uintptr(flags), 0); e != 0 {
		return errors.New("landlock_restrict_self: " + e.Error())
	}
	_ = syscall.Close(fd)
	return errors.New("exec " + path + ": " + syscall.Exec(path, argv, env).Error())
}

func isOurs(kv string) bool {
	for _, k := range Envs {
		if strings.HasPrefix(kv, k+"=") {
			return true
		}
	}
	return false
}

// bindMounts makes the mount tree private and binds each existing path
// onto itself, read-only for MountReadOnly entries.
func bindMounts(list string) error {
	if err := syscall.Mount("none", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return errors.New("private mounts: " + err.Error())
	}
	for _, line := range strings.Split(list, "\n") {
		ro := strings.HasPrefix(line, MountReadOnly)
		p := strings.TrimPrefix(strings.TrimPrefix(line, MountReadOnly), MountPin)
		if p == "" || p == line {
			continue
		}
		if fi, err := os.Lstat(p); err != nil || (!ro && !fi.IsDir()) {
			continue // missing (see README "Sandbox", known limits), or a .git file (worktree)
		}
		if err := syscall.Mount(p, p, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return errors.New("bind " + p + ": " + err.Error())
		}
		if !ro {
			continue
		}
		var sf syscall.Statfs_t
		if err := syscall.Statfs(p, &sf); err != nil {
			return errors.New("statfs " + p + ": " + err.Error())
		}
		// Flags locked by the outer namespace must be kept on remount.
		flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY)
		for _, f := range [...]struct{ st, ms uintptr }{
			{stNoSuid, syscall.MS_NOSUID}, {stNoDev, syscall.MS_NODEV}, {stNoExec, syscall.MS_NOEXEC},
			{stNoAtime, syscall.MS_NOATIME}, {stNoDirAtime, syscall.MS_NODIRATIME}, {stRelAtime, syscall.MS_RELATIME},
		} {
			if uintptr(sf.Flags)&f.st != 0 {
				flags |= f.ms
			}
		}
		if err := syscall.Mount("none", p, "", flags, ""); err != nil {
			return errors.New("read-only " + p + ": " + err.Error())
		}
	}
	return nil
}

//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// The seccomp filter's architecture constants (seccomp_linux.go).
const (
	nativeArch       = unix.AUDIT_ARCH_X86_64
	nativeIoctl      = unix.SYS_IOCTL
	compatArch       = unix.AUDIT_ARCH_I386
	compatIoctl      = 54 // ioctl in the i386 table
	nativeSocket     = unix.SYS_SOCKET
	ioUringSetup     = 425
	compatSocketcall = 102        // i386
	compatSocket     = 359        // i386
	x32Bit           = 0x40000000 // __X32_SYSCALL_BIT
)

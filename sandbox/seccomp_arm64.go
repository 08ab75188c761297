//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// The seccomp filter's architecture constants (seccomp_linux.go).
const (
	nativeArch       = unix.AUDIT_ARCH_AARCH64
	nativeIoctl      = unix.SYS_IOCTL
	compatArch       = unix.AUDIT_ARCH_ARM
	compatIoctl      = 54 // ioctl in the 32-bit ARM table
	nativeSocket     = unix.SYS_SOCKET
	ioUringSetup     = 425
	compatSocketcall = 0xffffffff // 32-bit ARM has no socketcall
	compatSocket     = 281        // 32-bit ARM
	x32Bit           = 0xffffffff // no x32 ABI: only the invalid number -1
)

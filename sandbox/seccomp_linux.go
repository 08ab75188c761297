//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Terminal ioctls that push input into, or act on, a terminal: TIOCSTI
// queues bytes the terminal's reader (the user's shell, after ama-rpc
// exits) runs as typed; TIOCLINUX can do the same on a virtual console.
const (
	ioctlTIOCSTI   = 0x5412
	ioctlTIOCLINUX = 0x541C
)

// seccompFilter is the classic BPF program of the sandbox's seccomp filter,
// hex-encoded for the launcher: ioctl(fd, TIOCSTI|TIOCLINUX, …) fails with
// EPERM, for the native ABI and the 32-bit compat one; on x86-64 the x32
// ABI (system call numbers with bit 30) is refused altogether; everything
// else is allowed.
//
// Hand-assembled with x/net/bpf rather than a policy library: the
// request is an unsigned int in the kernel, so only the low 32 bits of the
// argument may be compared (go-seccomp-bpf's Equal also compares the high
// half, and ioctl(fd, 1<<32|TIOCSTI) would pass it), and the filter is
// sixteen instructions.
func seccompFilter() (string, error) {
	const (
		errEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		allow    = unix.SECCOMP_RET_ALLOW
		argLo    = 16 + 8 // seccomp_data.args[1], low half (little endian)
	)
	const denyAt, allowAt = 14, 15 // the last two instructions
	skip := func(from, to int) uint8 { return uint8(to - from - 1) }
	prog := []bpf.Instruction{
		/* 0 */ bpf.LoadAbsolute{Off: 4, Size: 4}, // arch
		/* 1 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: nativeArch, SkipFalse: skip(1, 8)},
		/* 2 */ bpf.LoadAbsolute{Off: 0, Size: 4}, // nr
		/* 3 */ bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipTrue: skip(3, denyAt)},
		/* 4 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: nativeIoctl, SkipFalse: skip(4, allowAt)},
		/* 5 */ bpf.LoadAbsolute{Off: argLo, Size: 4},
		/* 6 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: ioctlTIOCSTI, SkipTrue: skip(6, denyAt)},
		/* 7 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: ioctlTIOCLINUX, SkipTrue: skip(7, denyAt), SkipFalse: skip(7, allowAt)},
		/* 8 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: compatArch, SkipFalse: skip(8, allowAt)}, // A still holds arch
		/* 9 */ bpf.LoadAbsolute{Off: 0, Size: 4},
		/* 10 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: compatIoctl, SkipFalse: skip(10, allowAt)},
		/* 11 */ bpf.LoadAbsolute{Off: argLo, Size: 4},
		/* 12 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: ioctlTIOCSTI, SkipTrue: skip(12, denyAt)},
		/* 13 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: ioctlTIOCLINUX, SkipTrue: skip(13, denyAt), SkipFalse: skip(13, allowAt)},
		/* 14 */ bpf.RetConstant{Val: errEPERM},
		/* 15 */ bpf.RetConstant{Val: allow},
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return "", fmt.Errorf("seccomp filter: %w", err)
	}
	b := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		b = binary.NativeEndian.AppendUint16(b, r.Op)
		b = append(b, r.Jt, r.Jf)
		b = binary.NativeEndian.AppendUint32(b, r.K)
	}
	return hex.EncodeToString(b), nil
}

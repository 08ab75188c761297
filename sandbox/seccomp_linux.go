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
// ABI (system call numbers with bit 30) is refused altogether. With
// denyInet (the network denied without a network namespace) IPv4 and IPv6
// sockets and io_uring (which can open sockets too) are refused as well:
// Landlock covers TCP only, this covers UDP and the rest. Everything else
// is allowed. System calls that need a capability (init_module,
// kexec_load, reboot, open_by_handle_at…) are not refused here: the
// launcher empties the command's capability sets in both modes (no
// exec can regain one: empty bounding set, SECBIT_NOROOT locked,
// no_new_privs), and a second list, by number for the native and the
// compat ABI of each architecture, would be one more place to keep
// complete for no gain while that holds (TestJailCapabilities checks it).
//
// Hand-assembled with x/net/bpf rather than a policy library: the
// request is an unsigned int in the kernel, so only the low 32 bits of the
// argument may be compared (go-seccomp-bpf's Equal also compares the high
// half, and ioctl(fd, 1<<32|TIOCSTI) would pass it), and the filter is a
// few instructions.
func seccompFilter(denyInet bool) (string, error) {
	const (
		errEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		allow    = unix.SECCOMP_RET_ALLOW
		arg0Lo   = 16     // seccomp_data.args[0], low half (little endian)
		arg1Lo   = 16 + 8 // seccomp_data.args[1], low half
	)
	// A tiny assembler: jumps name labels, resolved once the program is
	// laid out (every jump goes forward).
	type ins struct {
		i      bpf.Instruction // nil for a conditional jump
		label  string          // this instruction's label
		jt, jf string          // targets of a conditional jump ("" = next)
		cond   bpf.JumpTest
		val    uint32
	}
	var prog []ins
	at := func(label string, i bpf.Instruction) { prog = append(prog, ins{i: i, label: label}) }
	jumpAt := func(label string, cond bpf.JumpTest, val uint32, jt, jf string) {
		prog = append(prog, ins{label: label, cond: cond, val: val, jt: jt, jf: jf})
	}
	jump := func(cond bpf.JumpTest, val uint32, jt, jf string) { jumpAt("", cond, val, jt, jf) }
	at("", bpf.LoadAbsolute{Off: 4, Size: 4}) // arch
	jump(bpf.JumpEqual, nativeArch, "", "compat")
	at("", bpf.LoadAbsolute{Off: 0, Size: 4}) // nr
	jump(bpf.JumpGreaterOrEqual, x32Bit, "deny", "")
	if denyInet {
		jump(bpf.JumpEqual, nativeSocket, "domain", "")
		jump(bpf.JumpEqual, ioUringSetup, "deny", "")
	}
	jump(bpf.JumpEqual, nativeIoctl, "ioctl", "allow")
	jumpAt("compat", bpf.JumpEqual, compatArch, "", "allow") // A still holds arch
	at("", bpf.LoadAbsolute{Off: 0, Size: 4})
	if denyInet {
		jump(bpf.JumpEqual, compatSocketcall, "deny", "")
		jump(bpf.JumpEqual, compatSocket, "deny", "")
	}
	jump(bpf.JumpEqual, compatIoctl, "ioctl", "allow")
	at("ioctl", bpf.LoadAbsolute{Off: arg1Lo, Size: 4})
	jump(bpf.JumpEqual, ioctlTIOCSTI, "deny", "")
	jump(bpf.JumpEqual, ioctlTIOCLINUX, "deny", "allow")
	if denyInet {
		at("domain", bpf.LoadAbsolute{Off: arg0Lo, Size: 4})
		jump(bpf.JumpEqual, unix.AF_INET, "deny", "")
		jump(bpf.JumpEqual, unix.AF_INET6, "deny", "allow")
	}
	at("deny", bpf.RetConstant{Val: errEPERM})
	at("allow", bpf.RetConstant{Val: allow})
	labels := map[string]int{}
	for n, p := range prog {
		if p.label != "" {
			labels[p.label] = n
		}
	}
	var insns []bpf.Instruction
	for n, p := range prog {
		if p.i != nil {
			insns = append(insns, p.i)
			continue
		}
		skip := func(label string) (uint8, error) {
			if label == "" {
				return 0, nil
			}
			to, ok := labels[label]
			if !ok || to <= n || to-n-1 > 255 {
				return 0, fmt.Errorf("seccomp filter: bad jump to %q", label)
			}
			return uint8(to - n - 1), nil
		}
		jt, err := skip(p.jt)
		if err != nil {
			return "", err
		}
		jf, err := skip(p.jf)
		if err != nil {
			return "", err
		}
		insns = append(insns, bpf.JumpIf{Cond: p.cond, Val: p.val, SkipTrue: jt, SkipFalse: jf})
	}
	raw, err := bpf.Assemble(insns)
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

//go:build linux

package launcher

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// devRange is a range of character device numbers.
type devRange struct{ major, lo, hi uint32 }

// Device numbers that stay reachable: /dev/tty is the process's own
// controlling terminal (ENXIO without one), /dev/ptmx makes pseudo
// terminals (in the jail, of its own devpts).
const (
	ttyAuxMajor = 5 // TTYAUX_MAJOR: /dev/tty 0, /dev/console 1, /dev/ptmx 2
	vcsMajor    = 7 // VCS_MAJOR: /dev/vcs*, vcsa*, vcsu* (a VT's screen, readable and writable)
)

// terminalRanges are the device numbers of the kernel's terminals: every
// tty driver it lists in /proc/tty/drivers (virtual consoles, the console,
// serial lines, USB and hypervisor consoles, legacy ptys: what the kernel
// reaches, whatever the node is called) and the VT screens. Without that
// file, the fixed majors: VTs and 8250 serial lines (4), the console
// (5:1), ttyprintk (5:3), ttyACM (166), ttyUSB (188), ttyAMA and other
// low-density serial lines (204), hvc (229).
func terminalRanges() []devRange {
	const all = 1<<20 - 1
	r := []devRange{{vcsMajor, 0, all}}
	b, err := os.ReadFile("/proc/tty/drivers")
	if err != nil {
		return append(r, devRange{4, 0, all}, devRange{ttyAuxMajor, 1, 1}, devRange{ttyAuxMajor, 3, 3},
			devRange{166, 0, all}, devRange{188, 0, all}, devRange{204, 0, all}, devRange{229, 0, all})
	}
	// "name node major minors type", minors "n" or "lo-hi".
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		major, err := strconv.ParseUint(f[len(f)-3], 10, 32)
		if err != nil {
			continue
		}
		lo, hi, _ := strings.Cut(f[len(f)-2], "-")
		if hi == "" {
			hi = lo
		}
		l, err1 := strconv.ParseUint(lo, 10, 32)
		h, err2 := strconv.ParseUint(hi, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		r = append(r, devRange{uint32(major), uint32(l), uint32(h)})
	}
	return r
}

// Terminals lists the device nodes below dev ("/dev") that reach a host
// terminal or a VT's screen (terminalRanges), except /dev/tty and
// /dev/ptmx (5:0, 5:2) and what is in dev/pts (the jail's own devpts; the
// user's pseudo terminals without namespaces, not covered there). Links
// are not followed: /dev/char/4:1 and /dev/serial/by-id/* lead to a
// listed node.
func Terminals(dev string) []string {
	ranges := terminalRanges()
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := dir + "/" + e.Name()
			switch t := e.Type(); {
			case t.IsDir() && p != dev+"/pts":
				walk(p)
			case t&os.ModeCharDevice != 0:
				var st syscall.Stat_t
				if syscall.Lstat(p, &st) != nil {
					continue
				}
				d := uint64(st.Rdev)
				major := uint32((d>>8)&0xfff | (d>>32)&^0xfff)
				minor := uint32(d&0xff | (d>>12)&^0xff)
				if major == ttyAuxMajor && (minor == 0 || minor == 2) {
					continue
				}
				for _, r := range ranges {
					if r.major == major && minor >= r.lo && minor <= r.hi {
						out = append(out, p)
						break
					}
				}
			}
		}
	}
	walk(dev)
	return out
}

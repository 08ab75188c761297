//go:build linux

package store

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

const canMap = true

// sealedCopy copies p into a new memfd, seals it against every change and
// returns a read-only shared mapping of it; the descriptor is closed
// (spill.go).
func sealedCopy(p []byte) ([]byte, error) {
	fd, err := unix.MemfdCreate("ama-blob", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
			err = fmt.Errorf("%w: memfd_create: %w", unsupported, err)
		}
		return nil, err
	}
	defer unix.Close(fd)
	for off := 0; off < len(p); {
		n, err := unix.Pwrite(fd, p[off:], int64(off))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("write: %w", err)
		}
		off += n
	}
	seals := unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		return nil, fmt.Errorf("%w: seal: %w", unsupported, err)
	}
	m, err := unix.Mmap(fd, 0, len(p), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map: %w", err)
	}
	return m, nil
}

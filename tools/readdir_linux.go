//go:build linux

package tools

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe" // getdents64 records are read at their C offsets
)

// readDir lists a directory sorted by name (like os.ReadDir), with raw
// system calls: O_DIRECTORY makes the open itself refuse anything else
// (a FIFO put in a directory's place is never opened, and no fstat is
// needed), nothing is registered with the runtime poller, and getdents64
// fills a 64 KB buffer (os.File.ReadDir reads 8 KB at a time). The entry
// types come from the directory entries; only a file system that does not
// report them costs an lstat per entry. ctx is checked between reads.
func readDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	fd, err := openDirFD(p)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer syscall.Close(fd)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var all []fs.DirEntry
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := syscall.Getdents(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			sortEntries(all)
			return all, &fs.PathError{Op: "readdirent", Path: p, Err: err}
		}
		if n <= 0 {
			break
		}
		all = appendDirents(all, p, buf[:n])
	}
	sortEntries(all)
	return all, nil
}

// direntBufs holds the getdents buffers of readDir.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

func openDirFD(p string) (int, error) {
	for {
		fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC|openExtraFlags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// appendDirents parses linux_dirent64 records (ino u64, off s64, reclen
// u16, type u8, name NUL-terminated).
func appendDirents(all []fs.DirEntry, dir string, b []byte) []fs.DirEntry {
	const nameOff = int(unsafe.Offsetof(syscall.Dirent{}.Name))
	for len(b) >= nameOff {
		reclen := int(*(*uint16)(unsafe.Pointer(&b[unsafe.Offsetof(syscall.Dirent{}.Reclen)])))
		if reclen < nameOff || reclen > len(b) {
			break
		}
		rec := b[:reclen]
		b = b[reclen:]
		if *(*uint64)(unsafe.Pointer(&rec[0])) == 0 {
			continue // a deleted entry
		}
		name := rec[nameOff:]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if string(name) == "." || string(name) == ".." {
			continue
		}
		e := &dirent{dir: dir, name: string(name)}
		switch rec[unsafe.Offsetof(syscall.Dirent{}.Type)] {
		case syscall.DT_REG:
			e.typ = 0
		case syscall.DT_DIR:
			e.typ = fs.ModeDir
		case syscall.DT_LNK:
			e.typ = fs.ModeSymlink
		case syscall.DT_FIFO:
			e.typ = fs.ModeNamedPipe
		case syscall.DT_SOCK:
			e.typ = fs.ModeSocket
		case syscall.DT_CHR:
			e.typ = fs.ModeDevice | fs.ModeCharDevice
		case syscall.DT_BLK:
			e.typ = fs.ModeDevice
		default: // DT_UNKNOWN
			fi, err := os.Lstat(filepath.Join(dir, e.name))
			if err != nil {
				continue // gone since the listing
			}
			e.typ = fi.Mode().Type()
		}
		all = append(all, e)
	}
	return all
}

// dirent is one entry of readDir.
type dirent struct {
	dir, name string
	typ       fs.FileMode
}

func (d *dirent) Name() string               { return d.name }
func (d *dirent) IsDir() bool                { return d.typ.IsDir() }
func (d *dirent) Type() fs.FileMode          { return d.typ }
func (d *dirent) Info() (fs.FileInfo, error) { return os.Lstat(filepath.Join(d.dir, d.name)) }
func (d *dirent) String() string             { return fs.FormatDirEntry(d) }

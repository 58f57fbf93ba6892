package vfs

import (
	"errors"
	"os"
	"syscall"
)

// datasync flushes the file's data and only the metadata needed to read it
// back (not mtime), which is cheaper than fsync on a preallocated file.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// preallocate reserves real blocks (fallocate mode 0 also extends the size);
// file systems without fallocate get a sparse Truncate instead.
func preallocate(f *os.File, size int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return f.Truncate(size)
	}
	if err != nil {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	return nil
}

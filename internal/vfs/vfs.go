// Package vfs is the file-system seam under Zoo's durable state (wal, snap).
//
// Every durable write goes through an FS so that tests can crash it (MemFS's
// CrashClone drops what was not synced) and inject errors (package errorfs).
// Default is the operating system's file system.
//
// The durability model is the one POSIX gives and that MemFS enforces:
// file data is durable after File.Sync, and a directory entry (a created,
// renamed or removed name) is durable after SyncDir of its directory.
package vfs

import (
	"io"
	"os"
)

// File is an open file.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync makes the file's written data durable (fdatasync where the OS has it).
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
}

// FS is the file system. Every durable write of Zoo goes through it, so tests
// can crash it (drop what was not synced) and inject errors.
type FS interface {
	Create(name string) (File, error)        // O_RDWR|O_CREATE|O_TRUNC, 0644
	OpenReadWrite(name string) (File, error) // existing file, O_RDWR
	Open(name string) (File, error)          // read-only
	Remove(name string) error
	Rename(oldname, newname string) error
	MkdirAll(dir string, perm os.FileMode) error
	List(dir string) ([]string, error) // entry names (not paths), sorted
	SyncDir(dir string) error          // fsync the directory itself
	Stat(name string) (os.FileInfo, error)
}

// Preallocator is implemented by files that can reserve disk blocks ahead of
// writes. It is optional: use the Preallocate helper, which falls back to
// Truncate.
type Preallocator interface {
	// Preallocate makes the file size bytes long, reserving the blocks where
	// the platform can, so that later writes inside that size do not change
	// the file's size and an fdatasync need not flush the inode.
	Preallocate(size int64) error
}

// Preallocate grows f to size bytes (zero-filled), reserving blocks when f
// implements Preallocator. It never shrinks f.
func Preallocate(f File, size int64) error {
	if p, ok := f.(Preallocator); ok {
		return p.Preallocate(size)
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() >= size {
		return nil
	}
	return f.Truncate(size)
}

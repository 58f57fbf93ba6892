// Package errorfs wraps a vfs.FS to inject errors, so a test can fail
// "operation i for every i" and check that every failure is handled cleanly.
//
// Every FS and File call is one operation: the wrapper asks the Injector
// before running it and, if the Injector returns an error, does not run it
// (except for a short write, which writes half the buffer first).
package errorfs

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/zoohq/zoo/internal/vfs"
)

// OpKind is the kind of an operation.
type OpKind int

// The operations an Injector sees.
const (
	OpCreate OpKind = iota
	OpOpenReadWrite
	OpOpen
	OpRemove
	OpRename
	OpMkdirAll
	OpList
	OpSyncDir
	OpStat
	OpFileRead
	OpFileReadAt
	OpFileWrite
	OpFileClose
	OpFileSync
	OpFileTruncate
	OpFileStat
	OpFilePreallocate
)

var opNames = [...]string{"create", "open-rw", "open", "remove", "rename", "mkdir-all", "list",
	"sync-dir", "stat", "read", "read-at", "write", "close", "sync", "truncate", "file-stat", "preallocate"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// IsWrite reports whether the operation changes the file system.
func (k OpKind) IsWrite() bool {
	switch k {
	case OpCreate, OpRemove, OpRename, OpMkdirAll, OpSyncDir,
		OpFileWrite, OpFileSync, OpFileTruncate, OpFilePreallocate:
		return true
	}
	return false
}

// Op is one operation about to run.
type Op struct {
	Kind OpKind
	Path string // for Rename, the old name
}

func (o Op) String() string { return o.Kind.String() + " " + o.Path }

// Injector decides whether an operation fails. A nil error lets it run.
type Injector interface {
	MaybeError(op Op) error
}

// InjectorFunc adapts a function to an Injector.
type InjectorFunc func(Op) error

// MaybeError implements Injector.
func (f InjectorFunc) MaybeError(op Op) error { return f(op) }

// Errors an Injector can return. ErrInjected and ErrNoSpace wrap the errno
// a real disk would give; ErrShortWrite makes a Write write half its buffer
// before failing (a torn write), and fails other operations like ErrInjected.
var (
	ErrInjected   = fmt.Errorf("errorfs: injected error: %w", syscall.EIO)
	ErrNoSpace    = fmt.Errorf("errorfs: injected error: %w", syscall.ENOSPC)
	ErrShortWrite = fmt.Errorf("errorfs: injected short write: %w", syscall.EIO)
)

// Counter is an Injector that fails the operation with index Index (counting
// from 0, only operations that pass Filter) with Err, and counts operations.
type Counter struct {
	Index  int
	Err    error
	Filter func(Op) bool // nil: every operation counts

	mu    sync.Mutex
	n     int
	fired *Op
}

// OnIndex returns a Counter that fails operation i with err.
func OnIndex(i int, err error) *Counter { return &Counter{Index: i, Err: err} }

// MaybeError implements Injector.
func (c *Counter) MaybeError(op Op) error {
	if c.Filter != nil && !c.Filter(op) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.n
	c.n++
	if i == c.Index {
		c.fired = &op
		return c.Err
	}
	return nil
}

// Fired reports the failed operation, if the counter reached Index.
func (c *Counter) Fired() (Op, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fired == nil {
		return Op{}, false
	}
	return *c.fired, true
}

// Count is the number of operations counted so far.
func (c *Counter) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Wrap returns fs with inj consulted before every operation.
func Wrap(fs vfs.FS, inj Injector) vfs.FS { return &errFS{fs: fs, inj: inj} }

type errFS struct {
	fs  vfs.FS
	inj Injector
}

func (e *errFS) maybe(k OpKind, name string) error {
	if err := e.inj.MaybeError(Op{Kind: k, Path: name}); err != nil {
		return &os.PathError{Op: k.String(), Path: name, Err: err}
	}
	return nil
}

func (e *errFS) wrap(f vfs.File, err error, name string) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &errFile{f: f, fs: e, name: name}, nil
}

func (e *errFS) Create(name string) (vfs.File, error) {
	if err := e.maybe(OpCreate, name); err != nil {
		return nil, err
	}
	f, err := e.fs.Create(name)
	return e.wrap(f, err, name)
}

func (e *errFS) OpenReadWrite(name string) (vfs.File, error) {
	if err := e.maybe(OpOpenReadWrite, name); err != nil {
		return nil, err
	}
	f, err := e.fs.OpenReadWrite(name)
	return e.wrap(f, err, name)
}

func (e *errFS) Open(name string) (vfs.File, error) {
	if err := e.maybe(OpOpen, name); err != nil {
		return nil, err
	}
	f, err := e.fs.Open(name)
	return e.wrap(f, err, name)
}

func (e *errFS) Remove(name string) error {
	if err := e.maybe(OpRemove, name); err != nil {
		return err
	}
	return e.fs.Remove(name)
}

func (e *errFS) Rename(oldname, newname string) error {
	if err := e.maybe(OpRename, oldname); err != nil {
		return err
	}
	return e.fs.Rename(oldname, newname)
}

func (e *errFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := e.maybe(OpMkdirAll, dir); err != nil {
		return err
	}
	return e.fs.MkdirAll(dir, perm)
}

func (e *errFS) List(dir string) ([]string, error) {
	if err := e.maybe(OpList, dir); err != nil {
		return nil, err
	}
	return e.fs.List(dir)
}

func (e *errFS) SyncDir(dir string) error {
	if err := e.maybe(OpSyncDir, dir); err != nil {
		return err
	}
	return e.fs.SyncDir(dir)
}

func (e *errFS) Stat(name string) (os.FileInfo, error) {
	if err := e.maybe(OpStat, name); err != nil {
		return nil, err
	}
	return e.fs.Stat(name)
}

type errFile struct {
	f    vfs.File
	fs   *errFS
	name string
}

func (f *errFile) Read(p []byte) (int, error) {
	if err := f.fs.maybe(OpFileRead, f.name); err != nil {
		return 0, err
	}
	return f.f.Read(p)
}

func (f *errFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.maybe(OpFileReadAt, f.name); err != nil {
		return 0, err
	}
	return f.f.ReadAt(p, off)
}

func (f *errFile) Write(p []byte) (int, error) {
	err := f.fs.maybe(OpFileWrite, f.name)
	if err == nil {
		return f.f.Write(p)
	}
	if errors.Is(err, ErrShortWrite) {
		n, werr := f.f.Write(p[:len(p)/2])
		if werr != nil {
			return n, werr
		}
		return n, err
	}
	return 0, err
}

func (f *errFile) Close() error {
	if err := f.fs.maybe(OpFileClose, f.name); err != nil {
		// Release the handle anyway, as close(2) does even when it fails.
		_ = f.f.Close()
		return err
	}
	return f.f.Close()
}

func (f *errFile) Sync() error {
	if err := f.fs.maybe(OpFileSync, f.name); err != nil {
		return err
	}
	return f.f.Sync()
}

func (f *errFile) Truncate(size int64) error {
	if err := f.fs.maybe(OpFileTruncate, f.name); err != nil {
		return err
	}
	return f.f.Truncate(size)
}

func (f *errFile) Stat() (os.FileInfo, error) {
	if err := f.fs.maybe(OpFileStat, f.name); err != nil {
		return nil, err
	}
	return f.f.Stat()
}

// Preallocate keeps the inner file's preallocation reachable through the
// wrapper, and makes it an injectable operation of its own.
func (f *errFile) Preallocate(size int64) error {
	if err := f.fs.maybe(OpFilePreallocate, f.name); err != nil {
		return err
	}
	return vfs.Preallocate(f.f, size)
}

package snap

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
)

// osFS is an os-backed FS for tests (internal/vfs is not imported while
// it is being written).
type osFS struct{}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) List(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name()
	}
	sort.Strings(out)
	return out, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

var errInjected = errors.New("injected fault")

// faultFS fails the failAt-th mutating operation (counting from 0), file
// writes, syncs and closes included, and every one after it, as a disk
// that went bad would.
type faultFS struct {
	osFS
	failAt, ops int
}

func (f *faultFS) op() error {
	f.ops++
	if f.ops > f.failAt {
		return errInjected
	}
	return nil
}

func (f *faultFS) Create(name string) (File, error) {
	if err := f.op(); err != nil {
		return nil, err
	}
	file, err := f.osFS.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *faultFS) Remove(name string) error {
	if err := f.op(); err != nil {
		return err
	}
	return f.osFS.Remove(name)
}

func (f *faultFS) Rename(o, n string) error {
	if err := f.op(); err != nil {
		return err
	}
	return f.osFS.Rename(o, n)
}

func (f *faultFS) SyncDir(dir string) error {
	if err := f.op(); err != nil {
		return err
	}
	return f.osFS.SyncDir(dir)
}

type faultFile struct {
	File
	fs *faultFS
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.op(); err != nil {
		// A short write, as a full disk gives.
		n, _ := f.File.Write(p[:len(p)/2])
		return n, err
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	if err := f.fs.op(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) Close() error {
	err := f.fs.op()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}

func join(dir, name string) string { return filepath.Join(dir, name) }

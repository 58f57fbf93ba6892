package errorfs_test

import (
	"errors"
	"io"
	"syscall"
	"testing"

	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/vfs/errorfs"
)

// script does a few operations and stops at the first error.
func script(fsys vfs.FS) error {
	if err := fsys.MkdirAll("/d", 0o755); err != nil {
		return err
	}
	f, err := fsys.Create("/d/f")
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte("abcd")); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return fsys.SyncDir("/d")
}

func TestOnIndexEveryOp(t *testing.T) {
	for i := 0; ; i++ {
		c := errorfs.OnIndex(i, errorfs.ErrInjected)
		err := script(errorfs.Wrap(vfs.NewMem(), c))
		op, fired := c.Fired()
		if !fired {
			if err != nil {
				t.Fatalf("op %d: unexpected error %v", i, err)
			}
			if i != 6 {
				t.Fatalf("script has %d operations, want 6", i)
			}
			return
		}
		if !errors.Is(err, syscall.EIO) || !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("op %d (%v): err = %v, want injected EIO", i, op, err)
		}
	}
}

func TestShortWrite(t *testing.T) {
	m := vfs.NewMem()
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileWrite {
			return errorfs.ErrShortWrite
		}
		return nil
	})
	fsys := errorfs.Wrap(m, inj)
	f, err := fsys.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.Write([]byte("abcd"))
	if n != 2 || !errors.Is(err, errorfs.ErrShortWrite) {
		t.Fatalf("Write = %d, %v; want 2, short write", n, err)
	}
	r, _ := m.Open("/f")
	b, _ := io.ReadAll(r)
	if string(b) != "ab" {
		t.Fatalf("file holds %q, want the half that was written", b)
	}
}

func TestPreallocateThroughWrapper(t *testing.T) {
	c := &errorfs.Counter{Index: -1}
	fsys := errorfs.Wrap(vfs.NewMem(), c)
	f, err := fsys.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	if err := vfs.Preallocate(f, 100); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	if fi.Size() != 100 {
		t.Fatalf("size %d, want 100", fi.Size())
	}
}

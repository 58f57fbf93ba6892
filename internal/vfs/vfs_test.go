package vfs_test

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zoohq/zoo/internal/vfs"
)

func writeFile(t *testing.T, fsys vfs.FS, name, data string, sync bool) {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, data); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(fsys vfs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

// TestFSBasics runs the same script on the os FS and on MemFS, so MemFS
// behaves like the real thing where tests rely on it.
func TestFSBasics(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   vfs.FS
		dir  string
	}{
		{"os", vfs.Default, t.TempDir()},
		{"mem", vfs.NewMem(), "/data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := tc.fs, filepath.Join(tc.dir, "sub")
			if err := fsys.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			writeFile(t, fsys, a, "hello", true)
			if got, err := readFile(fsys, a); err != nil || got != "hello" {
				t.Fatalf("read a = %q, %v", got, err)
			}
			f, err := fsys.OpenReadWrite(a)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(2); err != nil {
				t.Fatal(err)
			}
			if err := vfs.Preallocate(f, 8); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 8)
			if n, err := f.ReadAt(buf, 0); n != 8 || err != nil {
				t.Fatalf("ReadAt = %d, %v", n, err)
			}
			if string(buf) != "he\x00\x00\x00\x00\x00\x00" {
				t.Fatalf("after truncate+preallocate: %q", buf)
			}
			if n, err := f.ReadAt(buf, 4); n != 4 || !errors.Is(err, io.EOF) {
				t.Fatalf("short ReadAt = %d, %v; want 4, EOF", n, err)
			}
			if _, err := io.WriteString(f, "HE"); err != nil {
				t.Fatal(err)
			}
			if fi, err := f.Stat(); err != nil || fi.Size() != 8 {
				t.Fatalf("Stat = %v, %v", fi, err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if err := fsys.Rename(a, b); err != nil {
				t.Fatal(err)
			}
			if err := fsys.SyncDir(dir); err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.Stat(a); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Stat(a) after rename: %v", err)
			}
			if got, _ := readFile(fsys, b); got != "HE\x00\x00\x00\x00\x00\x00" {
				t.Fatalf("b = %q", got)
			}
			writeFile(t, fsys, a, "x", false)
			names, err := fsys.List(dir)
			if err != nil || !slices.Equal(names, []string{"a", "b"}) {
				t.Fatalf("List = %v, %v", names, err)
			}
			if err := fsys.Remove(a); err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.Open(a); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Open removed: %v", err)
			}
			if _, err := fsys.OpenReadWrite(a); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("OpenReadWrite removed: %v", err)
			}
		})
	}
}

// TestCrashClone checks what survives a crash: synced data and synced
// directory entries, nothing else.
func TestCrashClone(t *testing.T) {
	type state map[string]string // name -> content; absent = missing
	tests := []struct {
		name string
		do   func(t *testing.T, m *vfs.MemFS)
		want state
	}{
		{"unsynced file and dir entry", func(t *testing.T, m *vfs.MemFS) {
			writeFile(t, m, "/d/f", "data", false)
		}, state{}},
		{"synced data, unsynced entry", func(t *testing.T, m *vfs.MemFS) {
			writeFile(t, m, "/d/f", "data", true)
		}, state{}},
		{"synced data and entry", func(t *testing.T, m *vfs.MemFS) {
			writeFile(t, m, "/d/f", "data", true)
			mustSyncDir(t, m, "/d")
		}, state{"/d/f": "data"}},
		{"entry synced before data", func(t *testing.T, m *vfs.MemFS) {
			writeFile(t, m, "/d/f", "data", false)
			mustSyncDir(t, m, "/d")
		}, state{"/d/f": ""}},
		{"append after sync is lost", func(t *testing.T, m *vfs.MemFS) {
			f, _ := m.Create("/d/f")
			io.WriteString(f, "ab")
			f.Sync()
			io.WriteString(f, "cd")
			mustSyncDir(t, m, "/d")
		}, state{"/d/f": "ab"}},
		{"unsynced rename reverts", func(t *testing.T, m *vfs.MemFS) {
			writeFile(t, m, "/d/f", "data", true)
			mustSyncDir(t, m, "/d")
			if err := m.Rename("/d/f", "/d/g"); err != nil {
				t.Fatal(err)
			}
		}, state{"/d/f": "data"}},
		{"synced rename", func(t *testing.T, m *vfs.MemFS) {
			writeFile(t, m, "/d/f", "data", true)
			m.Rename("/d/f", "/d/g")
			mustSyncDir(t, m, "/d")
		}, state{"/d/g": "data"}},
		{"unsynced remove reverts", func(t *testing.T, m *vfs.MemFS) {
			writeFile(t, m, "/d/f", "data", true)
			mustSyncDir(t, m, "/d")
			m.Remove("/d/f")
		}, state{"/d/f": "data"}},
		{"unsynced truncate reverts", func(t *testing.T, m *vfs.MemFS) {
			writeFile(t, m, "/d/f", "data", true)
			mustSyncDir(t, m, "/d")
			f, _ := m.OpenReadWrite("/d/f")
			f.Truncate(1)
			f.Close()
		}, state{"/d/f": "data"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := vfs.NewMem()
			if err := m.MkdirAll("/d", 0o755); err != nil {
				t.Fatal(err)
			}
			tc.do(t, m)
			c := m.CrashClone()
			names, err := c.List("/d")
			if err != nil {
				t.Fatal(err)
			}
			got := state{}
			for _, n := range names {
				got["/d/"+n], _ = readFile(c, "/d/"+n)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("after crash: %q, want %q", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("after crash: %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func mustSyncDir(t *testing.T, fsys vfs.FS, dir string) {
	t.Helper()
	if err := fsys.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}

func TestMemClosedFile(t *testing.T) {
	m := vfs.NewMem()
	f, err := m.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("write after close succeeded")
	}
	r, _ := m.Open("/f")
	if _, err := r.Write([]byte("x")); err == nil {
		t.Fatal("write to read-only file succeeded")
	}
}

package vfs

import (
	"io"
	"testing"
)

func readAll(t *testing.T, fs *MemFS, name string) string {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A torn write keeps the synced data and a prefix of what was written
// after the last Sync; keeping none is CrashClone.
func TestCrashCloneTorn(t *testing.T) {
	fs := NewMem()
	f, err := fs.Create("f")
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("."); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("synced|")); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("unsynced")); err != nil {
		t.Fatal(err)
	}
	var gotChanged int
	torn := fs.CrashCloneTorn(func(name string, changed int) int {
		gotChanged = changed
		return 3
	})
	if got := readAll(t, torn, "f"); got != "synced|uns" {
		t.Errorf("torn clone holds %q, want %q", got, "synced|uns")
	}
	if gotChanged != len("unsynced") {
		t.Errorf("keep was told %d bytes changed, want %d", gotChanged, len("unsynced"))
	}
	if got := readAll(t, fs.CrashCloneTorn(func(string, int) int { return 0 }), "f"); got != "synced|" {
		t.Errorf("keeping nothing: %q", got)
	}
	if got := readAll(t, fs, "f"); got != "synced|unsynced" {
		t.Errorf("the original changed: %q", got)
	}
	if files := fs.Files(); len(files) != 1 || files[0] != "f" {
		t.Errorf("Files = %q", files)
	}
	if err := fs.Corrupt("f", 0, 0x01); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, fs.CrashClone(), "f"); got != "rynced|" {
		t.Errorf("after bit rot the durable data is %q", got)
	}
}

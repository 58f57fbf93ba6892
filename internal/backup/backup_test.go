package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/vfs"
)

func archive(t *testing.T, entries ...*tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, h := range entries {
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write(make([]byte, h.Size))
		}
	}
	tw.Close()
	gz.Close()
	return b.Bytes()
}

// TestRestoreRefusesForeignArchives: an archive that is not a backup, or
// that names files outside snap/ and log/, is refused before anything is
// written outside the scratch directory.
func TestRestoreRefusesForeignArchives(t *testing.T) {
	for name, data := range map[string][]byte{
		"not gzip":           []byte("hello"),
		"path escape":        archive(t, &tar.Header{Name: "snap/../../etc/passwd", Size: 1}),
		"nested directory":   archive(t, &tar.Header{Name: "snap/a/b", Size: 1}),
		"symlink":            archive(t, &tar.Header{Name: "log/x.wal", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}),
		"other top dir":      archive(t, &tar.Header{Name: "etc/x", Size: 1}),
		"no snapshot at all": archive(t, &tar.Header{Name: "log/0000000000000000-0000000000000001.wal", Size: 0}),
	} {
		fs := vfs.NewMem()
		_, err := Restore(bytes.NewReader(data), fs, "/scratch", "/dst", RestoreOptions{})
		if err == nil {
			t.Errorf("%s: restored", name)
			continue
		}
		if names, _ := fs.List("/"); len(names) > 1 || len(names) == 1 && names[0] != "scratch" {
			t.Errorf("%s: wrote %v outside the scratch directory", name, names)
		}
		if name == "path escape" && !strings.Contains(err.Error(), "unexpected entry") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestWriteWithoutSnapshot: a directory without a snapshot has nothing
// to back up.
func TestWriteWithoutSnapshot(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/d/snap", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fs.MkdirAll("/d/log", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(&bytes.Buffer{}, fs, "/d/log", "/d/snap", Options{}); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("Write = %v, want ErrNoSnapshot", err)
	}
}

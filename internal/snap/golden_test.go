package snap

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zoohq/zoo/internal/txn"
)

// goldenDir holds snapshot files written by earlier builds. The format
// version 1 files were written by main's code as of 2026-11-26;
// ZOO_SNAP_WRITE_GOLDEN=1 go test -run TestGoldenSnapshots rewrites them,
// which only makes sense while the writer still writes version 1.
const goldenDir = "testdata/golden"

var goldens = []struct {
	index uint64
	c     Compression
	state func(testing.TB) *txn.State
}{
	{0x10, CompressNone, smallState},
	{0x20, CompressSnappy, testState}, // nil, empty and 200 KB data, ACLs, ephemerals
}

func goldenMeta(index uint64) Meta { return Meta{Index: index, Term: 3, Zxid: int64(index)} }

// TestGoldenSnapshots: snapshots written by earlier builds still load, to
// the same state. A format change must bump FormatVersion and keep
// reading these.
func TestGoldenSnapshots(t *testing.T) {
	if os.Getenv("ZOO_SNAP_WRITE_GOLDEN") == "1" {
		writeGoldens(t)
	}
	for _, g := range goldens {
		m, st, err := LoadFile(osFS{}, goldenDir, Name(g.index), Options{})
		if err != nil {
			t.Fatalf("%s: %v", Name(g.index), err)
		}
		if m != goldenMeta(g.index) {
			t.Errorf("%s: meta %+v, want %+v", Name(g.index), m, goldenMeta(g.index))
		}
		sameState(t, st, g.state(t))
	}
}

func writeGoldens(t *testing.T) {
	if err := os.MkdirAll(goldenDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, g := range goldens {
		tmp := t.TempDir()
		name, err := Write(osFS{}, tmp, goldenMeta(g.index), g.state(t), Options{Compression: g.c})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(tmp, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(goldenDir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

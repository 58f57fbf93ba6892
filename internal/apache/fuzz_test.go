package apache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// FuzzReadSnapshot throws bytes at the snapshot reader in every
// compression: it must return (a state or an error), never panic.
func FuzzReadSnapshot(f *testing.F) {
	for _, c := range []Compression{Plain, Gzip, Snappy} {
		dir, _ := fixture(&testing.T{}, 5, c)
		snaps, _ := filepath.Glob(filepath.Join(dir, "snapshot.*"))
		if b, err := os.ReadFile(snaps[0]); err == nil {
			f.Add(b, uint8(c))
		}
		os.RemoveAll(dir)
	}
	f.Fuzz(func(t *testing.T, b []byte, c uint8) {
		st := txn.NewState(tree.New())
		_, _ = ReadSnapshot(bytes.NewReader(b), "fuzz", Compression(c%3), Options{MaxLen: 1 << 20}, func(n *Node) error {
			return st.Tree.Restore(n.Path, n.Data, n.ACL, n.Stat)
		})
	})
}

// FuzzLogReader throws bytes at the txn log reader.
func FuzzLogReader(f *testing.F) {
	dir, _ := fixture(&testing.T{}, 5, Plain)
	if b, err := os.ReadFile(filepath.Join(dir, "log.100000001")); err == nil {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	os.RemoveAll(dir)
	f.Fuzz(func(t *testing.T, b []byte) {
		lr, err := NewLogReader(bytes.NewReader(b), "fuzz", Options{MaxLen: 1 << 20})
		if err != nil {
			return
		}
		st := txn.NewState(tree.New())
		for {
			e, err := lr.Next()
			if err != nil {
				return
			}
			touchedPaths(st, e.Txn)
			txn.Apply(st, e.Txn, e.Header.Zxid)
		}
	})
}

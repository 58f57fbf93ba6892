package replica

import (
	"testing"

	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
)

// TestSeedStartsTheLogAtAnIndex: a replica started on a seeded directory
// holds the seeded state at the seeded index, and its next txn gets the
// index after it (zoo import relies on this to keep Apache's zxids below
// Zoo's); Recover reads the same state back.
func TestSeedStartsTheLogAtAnIndex(t *testing.T) {
	const index = 5_000_000_123 // above 2^32, as an Apache zxid of epoch 1
	fs := vfs.NewMem()
	st := txn.NewState(tree.New())
	if _, err := st.Tree.CreateNode("/imported", []byte("x"), open, 0, -1, 4_000_000_000, 7); err != nil {
		t.Fatal(err)
	}
	st.Sessions[session] = txn.SessionInfo{TimeoutMs: 30000, Password: make([]byte, 16)}
	if err := Seed(fs, logDir, snapDir, st, SeedOptions{Index: index, Term: 1, Voters: []uint64{1}, SegmentSize: 64 << 10}); err != nil {
		t.Fatal(err)
	}
	if err := Seed(fs, logDir, snapDir, st, SeedOptions{Index: index, Term: 1, Voters: []uint64{1}, SegmentSize: 64 << 10}); err == nil {
		t.Fatal("a second Seed over the log succeeded")
	}
	d := startDurable(t, fs, 1000, func(c *Config) { c.ID = 1 })
	v := d.view()
	// The election after start applies the new leader's empty entry:
	// index+1.
	if v.Zxid < index || v.Zxid > index+1 || v.Nodes != st.Tree.NodeCount() || v.Sessions != 1 || v.Digest != st.Tree.Digest() {
		t.Fatalf("started at %+v, want zxid %d (+1) and the seeded state", v, index)
	}
	d.write(t, create("/after"))
	var czxid int64
	d.r.Read(func(s *txn.State, _ int64) {
		stat, _ := s.Tree.Stat("/after")
		czxid = stat.Czxid
	})
	if czxid <= index {
		t.Fatalf("the first txn after the seed has zxid %d, want > %d", czxid, index)
	}
	d.stop()
	got, zxid, err := Recover(Config{FS: fs, Dir: logDir, SnapDir: snapDir, SegmentSize: 64 << 10})
	if err != nil || zxid != czxid || !got.Tree.Exists("/after") || !got.Tree.Exists("/imported") {
		t.Fatalf("Recover = zxid %d, err %v", zxid, err)
	}
}

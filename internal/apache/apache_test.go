package apache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

var (
	open    = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	digestA = []jute.ACL{{Perms: jute.PermRead | jute.PermWrite, ID: jute.Id{Scheme: "digest", ID: "u:abc="}}, {Perms: jute.PermRead, ID: jute.Id{Scheme: "ip", ID: "10.0.0.0/8"}}}
)

const sess = 0x1000000aa

// history is a sequence of txns touching every kind of node and record;
// txn i is applied at zxid base+i.
func history() []*txn.Txn {
	c := func(p string, eph bool) *txn.Txn {
		return &txn.Txn{SessionID: sess, Time: 100, Type: jute.OpCreate2, Body: &txn.CreateTxn{Path: p, Data: []byte("d" + p), ACL: open, Ephemeral: eph, ParentCVersion: -1}}
	}
	return []*txn.Txn{
		{SessionID: sess, Time: 50, Type: jute.OpCreateSession, Body: &txn.CreateSessionTxn{TimeoutMs: 30000}},
		c("/a", false),
		c("/a/b", false),
		c("/a/eph", true),
		{SessionID: sess, Time: 101, Type: jute.OpCreateContainer, Body: &txn.CreateContainerTxn{Path: "/box", ACL: open, ParentCVersion: -1}},
		{SessionID: sess, Time: 102, Type: jute.OpCreateTTL, Body: &txn.CreateTTLTxn{Path: "/ttl", ACL: open, ParentCVersion: -1, TTL: 5000}},
		{SessionID: sess, Time: 103, Type: jute.OpSetData, Body: &txn.SetDataTxn{Path: "/a", Data: []byte("v2"), Version: 1}},
		{SessionID: sess, Time: 104, Type: jute.OpSetACL, Body: &txn.SetACLTxn{Path: "/a/b", ACL: digestA, Version: 1}},
		{SessionID: sess, Time: 105, Type: jute.OpMulti, Body: &txn.MultiTxn{Ops: []txn.SubTxn{
			{Type: jute.OpCreate, Body: &txn.CreateTxn{Path: "/m", ACL: open, ParentCVersion: -1}},
			{Type: jute.OpDelete, Body: &txn.DeleteTxn{Path: "/a/b"}},
		}}},
		{SessionID: sess, Time: 106, Type: jute.OpError, Body: &txn.ErrorTxn{Err: jute.NoNode}},
		c("/z", false),
		{SessionID: 0x2000000bb, Time: 107, Type: jute.OpCreateSession, Body: &txn.CreateSessionTxn{TimeoutMs: 10000}},
		{SessionID: 0x2000000bb, Time: 108, Type: jute.OpCloseSession, Body: &txn.CloseSessionTxn{}},
	}
}

// fixture writes an Apache version-2 directory: a snapshot after the
// first snapAt txns of history and a log of all of them, each with the
// digest Apache would log. It returns the directory and the expected
// final state.
func fixture(t *testing.T, snapAt int, c Compression) (string, *txn.State) {
	t.Helper()
	dir := t.TempDir()
	const base = 0x100000000
	st := txn.NewState(tree.New())
	var logBuf bytes.Buffer
	lw := NewLogWriter(&logBuf)
	for i, tx := range history() {
		z := int64(base + 1 + i)
		if b, ok := tx.Body.(*txn.CreateSessionTxn); ok {
			b.Password = Password(tx.SessionID)
		}
		txn.Apply(st, tx, z)
		if err := lw.Append(tx, z, &TxnDigest{Version: DigestVersion, Tree: int64(TreeDigest(st.Tree))}); err != nil {
			t.Fatal(err)
		}
		if i+1 == snapAt {
			var sb bytes.Buffer
			if err := WriteSnapshot(&sb, st, z, c); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, SnapshotName(z, c)), sb.Bytes())
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	// Preallocated zeros after the records, as Apache leaves them.
	write(t, filepath.Join(dir, "log.100000001"), append(logBuf.Bytes(), make([]byte, 4096)...))
	return dir, st
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sameState(t *testing.T, got, want *txn.State) {
	t.Helper()
	if g, w := got.Tree.Digest(), want.Tree.Digest(); g != w {
		t.Errorf("tree digest %x, want %x", g, w)
	}
	if g, w := got.Tree.NodeCount(), want.Tree.NodeCount(); g != w {
		t.Errorf("%d nodes, want %d", g, w)
	}
	if len(got.Sessions) != len(want.Sessions) {
		t.Errorf("sessions %v, want %v", got.Sessions, want.Sessions)
	}
	for id, w := range want.Sessions {
		if g := got.Sessions[id]; g.TimeoutMs != w.TimeoutMs || !bytes.Equal(g.Password, w.Password) {
			t.Errorf("session %#x = %+v, want %+v", id, g, w)
		}
	}
}

// TestLoadSnapshotAndLog: the newest snapshot, then every txn after it,
// gives the state the txns built, in every compression, with every
// digest checked.
func TestLoadSnapshotAndLog(t *testing.T) {
	for _, c := range []Compression{Plain, Gzip, Snappy} {
		for _, snapAt := range []int{1, 5, len(history())} {
			dir, want := fixture(t, snapAt, c)
			res, err := Load(dir, dir, LoadOptions{})
			if err != nil {
				t.Fatalf("compression %d, snapshot after %d: %v", c, snapAt, err)
			}
			sameState(t, res.State, want)
			if res.Txns != len(history())-snapAt {
				t.Errorf("replayed %d txns, want %d", res.Txns, len(history())-snapAt)
			}
			if res.Zxid != 0x100000000+int64(len(history())) {
				t.Errorf("zxid %#x", res.Zxid)
			}
			if res.DigestsChecked != res.Txns+1 {
				t.Errorf("checked %d digests, want %d", res.DigestsChecked, res.Txns+1)
			}
			if len(res.Warnings) > 0 {
				t.Errorf("warnings: %v", res.Warnings)
			}
		}
	}
}

// TestTornLastRecord: a record cut short at the end of a log is a torn
// write: the txns before it load, with a warning.
func TestTornLastRecord(t *testing.T) {
	dir, _ := fixture(t, 3, Plain)
	full, err := os.ReadFile(filepath.Join(dir, "log.100000001"))
	if err != nil {
		t.Fatal(err)
	}
	full = bytes.TrimRight(full, "\x00")
	for cut := 1; cut < 30; cut += 7 {
		write(t, filepath.Join(dir, "log.100000001"), full[:len(full)-cut])
		res, err := Load(dir, dir, LoadOptions{})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if res.Txns != len(history())-3-1 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "torn record") {
			t.Errorf("cut %d: %d txns, warnings %v", cut, res.Txns, res.Warnings)
		}
	}
}

// TestCorruption: a flipped byte in a record or a snapshot is reported
// with its file and offset; a damaged newest snapshot falls back to an
// older one only if the logs cover the gap.
func TestCorruption(t *testing.T) {
	dir, _ := fixture(t, 3, Plain)
	logPath := filepath.Join(dir, "log.100000001")
	b, _ := os.ReadFile(logPath)
	b[200] ^= 0x40
	write(t, logPath, b)
	_, err := Load(dir, dir, LoadOptions{})
	var fe *FileError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &fe) || fe.File != "log.100000001" || fe.Offset == 0 {
		t.Fatalf("flipped log byte: %v", err)
	}

	dir, _ = fixture(t, 3, Plain)
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshot.*"))
	b, _ = os.ReadFile(snaps[0])
	b[len(b)/2] ^= 1
	write(t, snaps[0], b)
	_, err = Load(dir, dir, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), filepath.Base(snaps[0])) {
		t.Fatalf("flipped snapshot byte: %v", err)
	}
}

// TestDigestMismatch: a log whose digests do not match the replayed tree
// fails the load unless told to go on.
func TestDigestMismatch(t *testing.T) {
	dir := t.TempDir()
	st := txn.NewState(tree.New())
	var sb, lb bytes.Buffer
	if err := WriteSnapshot(&sb, st, 1, Plain); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "snapshot.1"), sb.Bytes())
	lw := NewLogWriter(&lb)
	tx := &txn.Txn{Type: jute.OpCreate, Body: &txn.CreateTxn{Path: "/x", ACL: open, ParentCVersion: -1}}
	if err := lw.Append(tx, 2, &TxnDigest{Version: DigestVersion, Tree: 12345}); err != nil {
		t.Fatal(err)
	}
	lw.Flush()
	write(t, filepath.Join(dir, "log.2"), lb.Bytes())
	if _, err := Load(dir, dir, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Fatalf("Load = %v, want a digest mismatch", err)
	}
	res, err := Load(dir, dir, LoadOptions{IgnoreDigest: true})
	if err != nil || res.DigestMismatches != 1 {
		t.Fatalf("IgnoreDigest: %v, %+v", err, res)
	}
}

// TestMissingLog: txns missing between the snapshot and the log are
// refused, not skipped.
func TestMissingLog(t *testing.T) {
	dir := t.TempDir()
	st := txn.NewState(tree.New())
	var sb, lb bytes.Buffer
	WriteSnapshot(&sb, st, 1, Plain)
	write(t, filepath.Join(dir, "snapshot.1"), sb.Bytes())
	lw := NewLogWriter(&lb)
	lw.Append(&txn.Txn{Type: jute.OpCreate, Body: &txn.CreateTxn{Path: "/x", ACL: open, ParentCVersion: -1}}, 5, nil)
	lw.Flush()
	write(t, filepath.Join(dir, "log.5"), lb.Bytes())
	if _, err := Load(dir, dir, LoadOptions{}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Load = %v, want a gap error", err)
	}
	// A snapshot without any log is loaded, with a warning naming the
	// dataLogDir a user may have forgotten.
	other := t.TempDir()
	if res, err := Load(dir, other, LoadOptions{}); err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "dataLogDir") {
		t.Fatalf("no logs: %v, %+v", err, res)
	}
	os.Remove(filepath.Join(dir, "snapshot.1"))
	if _, err := Load(dir, dir, LoadOptions{}); !errors.Is(err, ErrNoData) {
		t.Fatalf("logs without a snapshot: %v", err)
	}
}

// TestHostileLengths: lengths of 2^31-1, negative counts and a node
// whose parent is missing give errors, not allocations or panics.
func TestHostileLengths(t *testing.T) {
	for name, build := range map[string]func(w *wr){
		"huge session count": func(w *wr) { w.int32(1<<31 - 1) },
		"negative sessions":  func(w *wr) { w.int32(-5) },
		"huge ACL list":      func(w *wr) { w.int32(0); w.int32(1); w.int64(1); w.int32(1<<31 - 1) },
		"huge path":          func(w *wr) { w.int32(0); w.int32(0); w.int32(1<<31 - 1) },
		"deep path without its parents": func(w *wr) {
			w.int32(0)
			w.int32(0)
			w.str(strings.Repeat("/a", 100000))
			w.buffer(nil)
			w.int64(-1)
			writeStat(w, &tree.StatPersisted{})
		},
		"orphan node": func(w *wr) {
			w.int32(0)
			w.int32(0)
			w.str("/no/parent")
			w.buffer(nil)
			w.int64(-1)
			writeStat(w, &tree.StatPersisted{})
		},
	} {
		var out bytes.Buffer
		w := newWr(&out)
		w.int32(snapMagic)
		w.int32(fileVersion)
		w.int64(-1)
		build(w)
		w.w.Flush()
		st := txn.NewState(tree.New())
		_, err := ReadSnapshot(&out, "s", Plain, Options{}, func(n *Node) error { return st.Tree.Restore(n.Path, n.Data, n.ACL, n.Stat) })
		var fe *FileError
		if !errors.As(err, &fe) || fe.File != "s" {
			t.Errorf("%s: %v, want a FileError", name, err)
		}
	}
}

// TestDeepTree: a chain of 2000 nested nodes (a hostile but valid
// snapshot) loads and writes back without trouble.
func TestDeepTree(t *testing.T) {
	st := txn.NewState(tree.New())
	p := ""
	for i := range 2000 {
		p += "/d"
		if _, err := st.Tree.CreateNode(p, nil, open, 0, -1, int64(i+1), 1); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := WriteSnapshot(&b, st, 2000, Plain); err != nil {
		t.Fatal(err)
	}
	back := txn.NewState(tree.New())
	s, err := ReadSnapshot(&b, "deep", Plain, Options{}, func(n *Node) error {
		return back.Tree.Restore(n.Path, n.Data, n.ACL, n.Stat)
	})
	if err != nil || s.Nodes != st.Tree.NodeCount() || back.Tree.Digest() != st.Tree.Digest() {
		t.Fatalf("deep tree: %v, %d nodes", err, s.Nodes)
	}
}

// TestSnapshotTrailersOfEachRelease: a 3.4/3.5 snapshot (no digest), a
// 3.6-3.8 one (digest) and a 3.9 one (digest and lastProcessedZxid) all
// read, and the digest is returned only where stored.
func TestSnapshotTrailersOfEachRelease(t *testing.T) {
	dir, _ := fixture(t, 5, Plain)
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshot.*"))
	full, err := os.ReadFile(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	const digestTrailer = 8 + 4 + 8 + 8 + 4 + 1 // ZxidDigest, then a seal
	old := full[:len(full)-digestTrailer]
	seal := func(b []byte) []byte {
		b = binary.BigEndian.AppendUint64(b, uint64(adler32.Checksum(b)))
		return append(binary.BigEndian.AppendUint32(b, 1), '/')
	}
	v39 := seal(binary.BigEndian.AppendUint64(append([]byte{}, full...), 0x100000005))
	for name, tc := range map[string]struct {
		b      []byte
		digest bool
	}{"3.5": {old, false}, "3.8": {full, true}, "3.9": {v39, true}} {
		st := txn.NewState(tree.New())
		s, err := ReadSnapshot(bytes.NewReader(tc.b), name, Plain, Options{}, func(n *Node) error {
			return st.Tree.Restore(n.Path, n.Data, n.ACL, n.Stat)
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if (s.Digest != nil) != tc.digest {
			t.Errorf("%s: digest %+v, want one: %v", name, s.Digest, tc.digest)
		}
	}
	// Bytes after the last seal are not a snapshot Apache wrote.
	if _, err := ReadSnapshot(bytes.NewReader(append(v39, 0)), "extra", Plain, Options{}, func(*Node) error { return nil }); err == nil {
		t.Error("a snapshot with a byte after its last seal was read")
	}
}

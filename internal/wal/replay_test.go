package wal

import (
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// entryIndex must agree with a full decode wherever it answers: recovery
// skips the entries it places under a snapshot without decoding them.
func FuzzEntryIndex(f *testing.F) {
	for _, e := range []raftpb.Entry{
		{},
		{Term: 3, Index: 17, Data: []byte("data")},
		{Type: raftpb.EntryConfChangeV2, Term: 1 << 40, Index: 1<<63 + 5, Data: make([]byte, 300)},
	} {
		b, err := e.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		idx, ok := entryIndex(b)
		var e raftpb.Entry
		err := e.Unmarshal(b)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("entryIndex read %d from a record that does not decode: %v", idx, err)
		}
		if e.Index != idx {
			t.Fatalf("entryIndex read %d; the decode reads %d", idx, e.Index)
		}
	})
}

// Every entry raft writes gets its index read without a decode.
func TestEntryIndexReadsWhatRaftWrites(t *testing.T) {
	for _, e := range []raftpb.Entry{
		{Index: 1},
		{Term: 2, Index: 300, Data: []byte("x")},
		{Type: raftpb.EntryConfChange, Term: 9, Index: 1 << 50, Data: make([]byte, 1<<16)},
	} {
		b, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if idx, ok := entryIndex(b); !ok || idx != e.Index {
			t.Errorf("entryIndex of entry %d (%d bytes) = %d, %v", e.Index, len(b), idx, ok)
		}
	}
}

// Recovery reads the entries the newest snapshot covers (their checksums,
// and their indexes for the markers it can fall back to) without decoding
// or keeping them: a restart after a snapshot does not pay for the log
// the snapshot replaced. Decoding each would allocate its data.
func TestRecoverySkipsCoveredEntries(t *testing.T) {
	const n = 5000
	mem := vfs.NewMem()
	writeCovered(t, mem, testDir, n, 100)
	allocs := testing.AllocsPerRun(3, func() {
		w, st, err := Open(mem, testDir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if len(st.Entries) != 0 || st.Snapshot.Index != n {
			t.Fatalf("recovered %d entries after the snapshot at %d; want none after %d", len(st.Entries), st.Snapshot.Index, n)
		}
		// The segments stay for the snapshots recovery may fall back to
		// (none here but the newest), and ReadFrom still reads them whole.
		older, err := w.ReadFrom(n)
		if err != nil || len(older.Entries) != 0 {
			t.Fatalf("ReadFrom(%d): %d entries, %v", n, len(older.Entries), err)
		}
	})
	// ReadFrom decodes every entry once; Open must add next to nothing.
	if allocs > n+n/10 {
		t.Errorf("recovery made %.0f allocations for %d covered entries: it decodes them", allocs, n)
	}
}

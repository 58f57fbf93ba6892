package wal

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

func mustStorage(t *testing.T, fs vfs.FS, snapData []byte) (*WAL, *Storage) {
	t.Helper()
	w, st := mustOpen(t, fs, testOpts)
	s, err := NewStorage(w, st, snapData)
	if err != nil {
		t.Fatal(err)
	}
	return w, s
}

// storageView is what raft can read from a Storage.
type storageView struct {
	HS          raftpb.HardState
	CS          raftpb.ConfState
	First, Last uint64
	Ents        string
	Snap        raftpb.SnapshotMetadata
	SnapData    string
}

func view(t *testing.T, s *Storage) storageView {
	t.Helper()
	var v storageView
	var err error
	v.HS, v.CS, _ = s.InitialState()
	v.First, _ = s.FirstIndex()
	v.Last, _ = s.LastIndex()
	ents, err := s.Entries(v.First, v.Last+1, 1<<30)
	if err != nil && v.Last >= v.First {
		t.Fatalf("Entries(%d, %d): %v", v.First, v.Last+1, err)
	}
	v.Ents = describe(ents)
	snap, _ := s.Snapshot()
	v.Snap, v.SnapData = snap.Metadata, string(snap.Data)
	return v
}

func TestStorage(t *testing.T) {
	cs := raftpb.ConfState{Voters: []uint64{1}}
	tests := []struct {
		name string
		do   func(t *testing.T, s *Storage)
		want storageView
	}{
		{"appends", func(t *testing.T, s *Storage) {
			must(t, s.Save(raftpb.HardState{Term: 1, Commit: 3}, mkEnts(1, 5, 1)))
			must(t, s.Save(raftpb.HardState{}, mkEnts(4, 6, 2)))
		}, storageView{HS: raftpb.HardState{Term: 1, Commit: 3}, First: 1, Last: 6,
			Ents: "1/1 2/1 3/1 4/2 5/2 6/2 "}},
		{"local snapshot and compaction", func(t *testing.T, s *Storage) {
			must(t, s.Save(raftpb.HardState{Term: 1, Commit: 8}, mkEnts(1, 10, 1)))
			_, err := s.CreateSnapshot(7, cs, []byte("tree@7"))
			must(t, err)
			must(t, s.Compact(7))
		}, storageView{HS: raftpb.HardState{Term: 1, Commit: 8}, CS: cs, First: 8, Last: 10,
			Ents: "8/1 9/1 10/1 ", Snap: raftpb.SnapshotMetadata{Index: 7, Term: 1, ConfState: cs}, SnapData: "tree@7"}},
		{"received snapshot", func(t *testing.T, s *Storage) {
			must(t, s.Save(raftpb.HardState{Term: 1, Commit: 2}, mkEnts(1, 10, 1)))
			meta := raftpb.SnapshotMetadata{Index: 50, Term: 3, ConfState: cs}
			must(t, s.ApplySnapshot(raftpb.Snapshot{Metadata: meta, Data: []byte("tree@50")}))
			must(t, s.Save(raftpb.HardState{Term: 3, Commit: 50}, mkEnts(51, 52, 3)))
		}, storageView{HS: raftpb.HardState{Term: 3, Commit: 50}, CS: cs, First: 51, Last: 52,
			Ents: "51/3 52/3 ", Snap: raftpb.SnapshotMetadata{Index: 50, Term: 3, ConfState: cs}, SnapData: "tree@50"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			w, s := mustStorage(t, fs, nil)
			tc.do(t, s)
			if got := view(t, s); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("storage:\n got %+v\nwant %+v", got, tc.want)
			}
			w.Close()
			// After a crash and recovery raft sees the same (the snapshot's
			// data comes from the snapshot file, passed in).
			w, s = mustStorage(t, fs.CrashClone(), []byte(tc.want.SnapData))
			defer w.Close()
			if got := view(t, s); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("recovered storage:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestStorageErrors(t *testing.T) {
	w, s := mustStorage(t, vfs.NewMem(), nil)
	defer w.Close()
	must(t, s.Save(raftpb.HardState{}, mkEnts(1, 10, 1)))
	if _, err := s.CreateSnapshot(11, raftpb.ConfState{}, nil); !errors.Is(err, raft.ErrUnavailable) {
		t.Fatalf("snapshot past the end: %v", err)
	}
	_, err := s.CreateSnapshot(5, raftpb.ConfState{}, nil)
	must(t, err)
	if _, err := s.CreateSnapshot(4, raftpb.ConfState{}, nil); !errors.Is(err, raft.ErrSnapOutOfDate) {
		t.Fatalf("older snapshot: %v", err)
	}
	if err := s.Compact(6); !errors.Is(err, raft.ErrUnavailable) {
		t.Fatalf("compact past the snapshot: %v", err)
	}
	must(t, s.Compact(5))
	if _, err := s.Term(4); !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("Term(4) = %v, want ErrCompacted", err)
	}
	if _, err := s.Entries(3, 7, 1<<20); !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("Entries(3, 7) = %v, want ErrCompacted", err)
	}
}

// TestStorageRawNode runs a one-voter raft group on the Storage, in raft's
// Ready order (persist, apply, Advance), restarts it from the WAL after a
// crash, and checks that every committed entry is still there.
func TestStorageRawNode(t *testing.T) {
	fs := vfs.NewMem()
	w, s := mustStorage(t, fs, nil)
	rn := newRawNode(t, s)
	must(t, rn.Bootstrap([]raft.Peer{{ID: 1}}))
	applied := drive(t, rn, s, nil) // applies the bootstrap ConfChange
	must(t, rn.Campaign())
	applied = drive(t, rn, s, applied)
	for i := range 5 {
		must(t, rn.Propose([]byte(fmt.Sprintf("op %d", i))))
		applied = drive(t, rn, s, applied)
	}
	w.Close()

	w, s = mustStorage(t, fs.CrashClone(), nil)
	defer w.Close()
	// With no snapshot, the ConfState is empty: the membership comes back by
	// re-applying the committed ConfChange entries.
	hs, _, _ := s.InitialState()
	ents, err := s.Entries(1, hs.Commit+1, 1<<30)
	must(t, err)
	var got []string
	for _, e := range ents {
		if e.Type == raftpb.EntryNormal && len(e.Data) > 0 {
			got = append(got, string(e.Data))
		}
	}
	if !reflect.DeepEqual(got, applied) {
		t.Fatalf("committed after restart %q, applied before %q", got, applied)
	}
	rn = newRawNode(t, s)
	applied = drive(t, rn, s, nil) // committed entries are applied again (Applied is 0)
	must(t, rn.Campaign())
	applied = drive(t, rn, s, applied)
	must(t, rn.Propose([]byte("after restart")))
	applied = drive(t, rn, s, applied)
	if len(applied) == 0 || applied[len(applied)-1] != "after restart" {
		t.Fatalf("after restart applied %q", applied)
	}
}

func newRawNode(t *testing.T, s *Storage) *raft.RawNode {
	t.Helper()
	rn, err := raft.NewRawNode(&raft.Config{ID: 1, ElectionTick: 10, HeartbeatTick: 1, Storage: s,
		MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 16, Logger: discardLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	return rn
}

// drive processes Readies until there are none, returning the normal
// entries applied (appended to applied).
func drive(t *testing.T, rn *raft.RawNode, s *Storage, applied []string) []string {
	t.Helper()
	for rn.HasReady() {
		rd := rn.Ready()
		must(t, s.Save(rd.HardState, rd.Entries))
		for _, e := range rd.CommittedEntries {
			switch e.Type {
			case raftpb.EntryNormal:
				if len(e.Data) > 0 {
					applied = append(applied, string(e.Data))
				}
			case raftpb.EntryConfChange:
				var cc raftpb.ConfChange
				must(t, cc.Unmarshal(e.Data))
				rn.ApplyConfChange(cc)
			}
		}
		rn.Advance(rd)
	}
	return applied
}

// discardLogger keeps raft quiet in tests.
type discardLogger struct{}

func (discardLogger) Debug(...any)            {}
func (discardLogger) Debugf(string, ...any)   {}
func (discardLogger) Error(...any)            {}
func (discardLogger) Errorf(string, ...any)   {}
func (discardLogger) Info(...any)             {}
func (discardLogger) Infof(string, ...any)    {}
func (discardLogger) Warning(...any)          {}
func (discardLogger) Warningf(string, ...any) {}
func (discardLogger) Fatal(v ...any)          { panic(fmt.Sprint(v...)) }
func (discardLogger) Fatalf(f string, v ...any) {
	panic(fmt.Sprintf(f, v...))
}
func (discardLogger) Panic(v ...any)            { panic(fmt.Sprint(v...)) }
func (discardLogger) Panicf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }

package wal

import (
	"fmt"
	"sync"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Storage is raft's Storage over a WAL: raft reads an in-memory copy of the
// log since the last snapshot (a raft.MemoryStorage), and every write goes
// to the WAL, durably, before it reaches that copy. The read methods are
// safe for concurrent use; the write methods are meant for the one
// goroutine that runs raft's Ready loop.
type Storage struct {
	w   *WAL
	wmu sync.Mutex // keeps WAL order and memory order the same
	ms  *raft.MemoryStorage
}

var _ raft.Storage = (*Storage)(nil)

// NewStorage returns a Storage holding the state Open recovered. snapData is
// the snapshot's data (from the snapshot file the marker names), returned by
// Snapshot; nil if there is no snapshot or it is not loaded.
func NewStorage(w *WAL, st *State, snapData []byte) (*Storage, error) {
	ms := raft.NewMemoryStorage()
	if st.Snapshot.Index > 0 {
		if err := ms.ApplySnapshot(raftpb.Snapshot{Metadata: st.Snapshot, Data: snapData}); err != nil {
			return nil, fmt.Errorf("wal: storage: %w", err)
		}
	}
	if err := ms.SetHardState(st.HardState); err != nil {
		return nil, fmt.Errorf("wal: storage: %w", err)
	}
	if err := ms.Append(st.Entries); err != nil {
		return nil, fmt.Errorf("wal: storage: %w", err)
	}
	return &Storage{w: w, ms: ms}, nil
}

// InitialState implements raft.Storage.
func (s *Storage) InitialState() (raftpb.HardState, raftpb.ConfState, error) {
	return s.ms.InitialState()
}

// Entries implements raft.Storage.
func (s *Storage) Entries(lo, hi, maxSize uint64) ([]raftpb.Entry, error) {
	return s.ms.Entries(lo, hi, maxSize)
}

// Term implements raft.Storage.
func (s *Storage) Term(i uint64) (uint64, error) { return s.ms.Term(i) }

// LastIndex implements raft.Storage.
func (s *Storage) LastIndex() (uint64, error) { return s.ms.LastIndex() }

// FirstIndex implements raft.Storage.
func (s *Storage) FirstIndex() (uint64, error) { return s.ms.FirstIndex() }

// Snapshot implements raft.Storage.
func (s *Storage) Snapshot() (raftpb.Snapshot, error) { return s.ms.Snapshot() }

// Save persists a Ready's HardState and entries with one fsync (WAL.Save),
// then makes them visible to raft.
func (s *Storage) Save(hs raftpb.HardState, ents []raftpb.Entry) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.w.Save(hs, ents); err != nil {
		return err
	}
	if !isEmptyHardState(hs) {
		if err := s.ms.SetHardState(hs); err != nil {
			return err
		}
	}
	return s.ms.Append(ents)
}

// ApplySnapshot installs a snapshot received from the leader (a Ready's
// Snapshot). Its file must already be fsynced: the WAL marker written here
// is the commit point. The in-memory log is replaced, as raft expects.
func (s *Storage) ApplySnapshot(snap raftpb.Snapshot) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	cur, err := s.ms.Snapshot()
	if err != nil {
		return err
	}
	if snap.Metadata.Index <= cur.Metadata.Index {
		return raft.ErrSnapOutOfDate
	}
	if err := s.w.SaveReceivedSnapshotMarker(snap.Metadata); err != nil {
		return err
	}
	return s.ms.ApplySnapshot(snap)
}

// CreateSnapshot records a snapshot this server took at applied index i
// (its file already fsynced), keeping the entries after i. It returns the
// snapshot, as raft.MemoryStorage.CreateSnapshot does.
func (s *Storage) CreateSnapshot(i uint64, cs raftpb.ConfState, data []byte) (raftpb.Snapshot, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	cur, err := s.ms.Snapshot()
	if err != nil {
		return raftpb.Snapshot{}, err
	}
	if i <= cur.Metadata.Index {
		return raftpb.Snapshot{}, raft.ErrSnapOutOfDate
	}
	last, _ := s.ms.LastIndex()
	if i > last {
		return raftpb.Snapshot{}, fmt.Errorf("wal: snapshot at %d beyond the last index %d: %w", i, last, raft.ErrUnavailable)
	}
	term, err := s.ms.Term(i)
	if err != nil {
		return raftpb.Snapshot{}, err
	}
	if err := s.w.SaveSnapshotMarker(raftpb.SnapshotMetadata{Index: i, Term: term, ConfState: cs}); err != nil {
		return raftpb.Snapshot{}, err
	}
	return s.ms.CreateSnapshot(i, &cs, data)
}

// Compact drops entries up to index from memory. index must not pass the
// latest snapshot. The files are released separately (WAL.ReleaseTo), as
// far as the oldest snapshot recovery may still fall back to: keeping
// entries behind the snapshot on disk costs no memory.
func (s *Storage) Compact(index uint64) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	snap, err := s.ms.Snapshot()
	if err != nil {
		return err
	}
	if index > snap.Metadata.Index {
		return fmt.Errorf("wal: compact to %d past the snapshot at %d: %w", index, snap.Metadata.Index, raft.ErrUnavailable)
	}
	return s.ms.Compact(index)
}

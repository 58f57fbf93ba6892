package wal

import (
	"fmt"
	"slices"
	"sync"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Storage is raft's Storage over a WAL. Every write goes to the WAL,
// durably, before raft can read it. Raft reads the log since the last
// compaction from memory, but memory holds only the newest entries whole
// (Evict lets the others go): older ones, which a lagging follower may
// still need, are read back from the WAL, where they are anyway. The
// read methods are safe for concurrent use; the write methods are meant
// for the one goroutine that makes raft's writes durable.
type Storage struct {
	w    *WAL
	wmu  sync.Mutex // keeps WAL order and memory order the same
	locs []loc      // Save's scratch, under wmu

	mu   sync.Mutex // guards what follows; held across a read back from the WAL
	hs   raftpb.HardState
	snap raftpb.Snapshot
	log  entryLog
	err  error // the first failed read back: sticky
}

var _ raft.Storage = (*Storage)(nil)

// NewStorage returns a Storage holding the state Open recovered. snapData is
// the snapshot's data (from the snapshot file the marker names), returned by
// Snapshot; nil if there is no snapshot or it is not loaded.
func NewStorage(w *WAL, st *State, snapData []byte) (*Storage, error) {
	s := &Storage{w: w, hs: st.HardState, log: newEntryLog(st.Snapshot.Index, st.Snapshot.Term)}
	s.snap = raftpb.Snapshot{Metadata: st.Snapshot, Data: snapData}
	var locs []loc
	if len(st.locs) == len(st.Entries) {
		locs = st.locs
	}
	if err := s.log.append(st.Entries, locs); err != nil {
		return nil, fmt.Errorf("wal: storage: %w", err)
	}
	return s, nil
}

// InitialState implements raft.Storage.
func (s *Storage) InitialState() (raftpb.HardState, raftpb.ConfState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hs, s.snap.Metadata.ConfState, nil
}

// Entries implements raft.Storage. Entries no longer held are read back
// from the WAL. Should that fail, the error is kept for Err and raft is
// told the entries are compacted (raft panics on any other error): its
// owner must stop on Err.
func (s *Storage) Entries(lo, hi, maxSize uint64) ([]raftpb.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.log
	if err := l.check(lo, hi); err != nil || lo == hi {
		return nil, err
	}
	hi = lo + uint64(l.fit(lo, hi, maxSize))
	mf := l.memFirst()
	if lo >= mf {
		return l.mem[lo-mf : hi-mf : hi-mf], nil
	}
	ents := make([]raftpb.Entry, 0, hi-lo)
	ents, err := s.w.fetch(lo, l.slots[lo-l.first():min(hi, mf)-l.first()], ents)
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return nil, raft.ErrCompacted
	}
	if hi > mf {
		ents = append(ents, l.mem[:hi-mf]...)
	}
	return ents, nil
}

// Err returns the first failure to read entries back from the WAL: the
// log on disk is damaged or gone, and raft was told those entries are
// compacted. The Storage's owner must stop.
func (s *Storage) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Term implements raft.Storage.
func (s *Storage) Term(i uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.term(i)
}

// LastIndex implements raft.Storage.
func (s *Storage) LastIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.last(), nil
}

// FirstIndex implements raft.Storage.
func (s *Storage) FirstIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.first(), nil
}

// Snapshot implements raft.Storage.
func (s *Storage) Snapshot() (raftpb.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap, nil
}

// Save persists a Ready's HardState and entries with one fsync (WAL.Save),
// then makes them visible to raft.
func (s *Storage) Save(hs raftpb.HardState, ents []raftpb.Entry) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.locs = slices.Grow(s.locs[:0], len(ents))[:len(ents)]
	if err := s.w.save(hs, ents, s.locs); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !isEmptyHardState(hs) && newerHardState(hs, s.hs) {
		s.hs = hs // as the log holds it (WAL.save)
	}
	return s.log.append(ents, s.locs)
}

// Evict stops holding in memory the entries up to index; raft still reads
// them, from the WAL. Call it with entries applied (raft reads those only
// for a follower that lags), keeping the newest for followers that lag a
// little. It returns how many entries it let go.
func (s *Storage) Evict(index uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.evict(index)
}

// Held returns how many entries memory holds whole.
func (s *Storage) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.log.mem)
}

// Sizes returns the sizes of the entries in [lo, hi) (raftpb.Entry.Size),
// from what the log keeps of each, held whole or not.
func (s *Storage) Sizes(lo, hi uint64) ([]uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.log
	if err := l.check(lo, hi); err != nil {
		return nil, err
	}
	sizes := make([]uint32, hi-lo)
	for i, sl := range l.slots[lo-l.first() : hi-l.first()] {
		sizes[i] = sl.size
	}
	return sizes, nil
}

// ApplySnapshot installs a snapshot received from the leader (a Ready's
// Snapshot). Its file must already be fsynced: the WAL marker written here
// is the commit point. The log is replaced, as raft expects.
func (s *Storage) ApplySnapshot(snap raftpb.Snapshot) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if snap.Metadata.Index <= s.snapIndex() {
		return raft.ErrSnapOutOfDate
	}
	if err := s.w.SaveReceivedSnapshotMarker(snap.Metadata); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap = snap
	s.log = newEntryLog(snap.Metadata.Index, snap.Metadata.Term)
	return nil
}

func (s *Storage) snapIndex() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.Metadata.Index
}

// CreateSnapshot records a snapshot this server took at applied index i
// (its file already fsynced), keeping the entries after i. It returns the
// snapshot, as raft.MemoryStorage.CreateSnapshot does.
func (s *Storage) CreateSnapshot(i uint64, cs raftpb.ConfState, data []byte) (raftpb.Snapshot, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	cur, last := s.snap.Metadata.Index, s.log.last()
	term, terr := s.log.term(i)
	s.mu.Unlock()
	switch {
	case i <= cur:
		return raftpb.Snapshot{}, raft.ErrSnapOutOfDate
	case i > last:
		return raftpb.Snapshot{}, fmt.Errorf("wal: snapshot at %d beyond the last index %d: %w", i, last, raft.ErrUnavailable)
	case terr != nil:
		return raftpb.Snapshot{}, terr
	}
	meta := raftpb.SnapshotMetadata{Index: i, Term: term, ConfState: cs}
	if err := s.w.SaveSnapshotMarker(meta); err != nil {
		return raftpb.Snapshot{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap = raftpb.Snapshot{Metadata: meta, Data: data}
	return s.snap, nil
}

// Compact drops entries up to index from the log raft reads. index must
// not pass the latest snapshot. The files are released separately
// (Release), as far as the oldest snapshot recovery may still fall back
// to: keeping entries behind the snapshot on disk costs no memory.
//
// It does not wait for a write under way (wmu): the loop that calls it must
// not wait on a slow fsync. Memory changes only under mu, and the two
// cannot meet: compaction stays at or below the commit index, and raft
// never writes over a committed entry.
func (s *Storage) Compact(index uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if snap := s.snap.Metadata.Index; index > snap {
		return fmt.Errorf("wal: compact to %d past the snapshot at %d: %w", index, snap, raft.ErrUnavailable)
	}
	return s.log.compact(index)
}

// Release is the WAL's ReleaseTo, but never past the entries raft may
// still read: those after the log's base may be read back from the files.
func (s *Storage) Release(index uint64) error {
	s.mu.Lock()
	base := s.log.base
	s.mu.Unlock()
	// The base only grows, so what it allows now stays allowed: no lock
	// is held across the removals and their fsyncs.
	return s.w.ReleaseTo(min(index, base))
}

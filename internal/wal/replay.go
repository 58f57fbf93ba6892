package wal

import (
	"fmt"

	"go.etcd.io/raft/v3/raftpb"
)

// replay rebuilds State from records in log order.
type replay struct {
	state State
}

func (r *replay) apply(rec record) error {
	switch rec.typ {
	case typeEntry:
		var e raftpb.Entry
		if err := e.Unmarshal(rec.payload); err != nil {
			return fmt.Errorf("decode entry: %w", err)
		}
		return r.entry(e)
	case typeHardState:
		var hs raftpb.HardState
		if err := hs.Unmarshal(rec.payload); err != nil {
			return fmt.Errorf("decode hard state: %w", err)
		}
		r.state.HardState = hs
	case typeSnapshotMark:
		var m raftpb.SnapshotMetadata
		if err := m.Unmarshal(rec.payload); err != nil {
			return fmt.Errorf("decode snapshot marker: %w", err)
		}
		r.snapshot(m)
	default:
		return fmt.Errorf("unexpected record type %v", rec.typ)
	}
	return nil
}

// entry appends e, replacing any entries at or after its index (raft's
// truncation of a conflicting suffix).
func (r *replay) entry(e raftpb.Entry) error {
	ents := r.state.Entries
	if e.Index <= r.state.Snapshot.Index {
		return nil // covered by the snapshot
	}
	if len(ents) == 0 {
		// The first entry after a purge may start above the snapshot marker
		// that opens the oldest kept segment; finish checks the final gap.
		r.state.Entries = append(ents, e)
		return nil
	}
	first, last := ents[0].Index, ents[len(ents)-1].Index
	switch {
	case e.Index > last+1:
		return fmt.Errorf("entry %d follows entry %d: entries are missing", e.Index, last)
	case e.Index < first:
		r.state.Entries = append(ents[:0], e)
	default:
		r.state.Entries = append(ents[:e.Index-first], e)
	}
	return nil
}

// snapshot applies a snapshot marker. A snapshot of this log (the entry at
// its index has its term) drops the entries it covers and keeps the rest, as
// raft's MemoryStorage.Compact does. A snapshot received from a leader whose
// log differs replaces the whole log, as MemoryStorage.ApplySnapshot does:
// keeping entries that conflict with it would break raft's log matching.
func (r *replay) snapshot(m raftpb.SnapshotMetadata) {
	if m.Index < r.state.Snapshot.Index {
		return
	}
	r.state.Snapshot = m
	ents := r.state.Entries
	if len(ents) == 0 || ents[0].Index > m.Index {
		return // nothing covered; finish reports a gap if one remains
	}
	last := ents[len(ents)-1].Index
	if last <= m.Index || ents[m.Index-ents[0].Index].Term != m.Term {
		r.state.Entries = nil
		return
	}
	r.state.Entries = append([]raftpb.Entry(nil), ents[m.Index+1-ents[0].Index:]...)
}

// finish checks that the entries follow the snapshot with no gap.
func (r *replay) finish() error {
	ents := r.state.Entries
	if len(ents) > 0 && ents[0].Index != r.state.Snapshot.Index+1 {
		return fmt.Errorf("%w: entries start at %d but the snapshot is at %d", ErrCorrupt, ents[0].Index, r.state.Snapshot.Index)
	}
	return nil
}

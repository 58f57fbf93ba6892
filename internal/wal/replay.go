package wal

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// replay rebuilds State from records in log order. By default it keeps the
// entries after the newest snapshot marker; with fixed set it keeps those
// after keepFrom instead (ReadFrom, to recover from an older snapshot).
type replay struct {
	state    State
	fixed    bool
	keepFrom uint64
	// markers are the snapshot markers of this log, oldest first: reset
	// when a leader's snapshot replaces the log.
	markers []raftpb.SnapshotMetadata
	// base is the lowest entry index seen since the log last began (a
	// fresh log or a leader's snapshot); 0 if none. A marker below base-1
	// has lost entries after it and cannot be recovered from.
	base uint64
	// skipTo is an index the snapshot recovered will be at or above (the
	// newest marker the last segment's header repeats): the entries up to
	// it are counted for base and not decoded, since a later marker drops
	// them. Zero skips nothing; a fixed replay ignores it.
	skipTo uint64
}

// apply replays rec, a record of segment seq.
func (r *replay) apply(rec record, seq uint64) error {
	switch rec.typ {
	case typeEntry:
		if idx, ok := entryIndex(rec.payload); ok && !r.fixed && idx <= r.skipTo {
			r.seen(idx) // and dropped: the snapshot recovered covers it
			return nil
		}
		var e raftpb.Entry
		if err := e.Unmarshal(rec.payload); err != nil {
			return fmt.Errorf("decode entry: %w", err)
		}
		return r.entry(e, makeLoc(seq, rec.off))
	case typeHardState:
		var hs raftpb.HardState
		if err := hs.Unmarshal(rec.payload); err != nil {
			return fmt.Errorf("decode hard state: %w", err)
		}
		r.state.HardState = hs
	case typeSnapshotMark, typeReceivedSnap:
		var m raftpb.SnapshotMetadata
		if err := m.Unmarshal(rec.payload); err != nil {
			return fmt.Errorf("decode snapshot marker: %w", err)
		}
		r.snapshot(m, rec.typ == typeReceivedSnap)
	default:
		return fmt.Errorf("unexpected record type %v", rec.typ)
	}
	return nil
}

// cutoff is the index up to which entries are not kept. A fixed replay
// keeps the entry at keepFrom until finish, to check markers against.
func (r *replay) cutoff() uint64 {
	if r.fixed {
		return max(r.keepFrom, 1) - 1
	}
	return r.state.Snapshot.Index
}

// seen counts an entry at idx for base.
func (r *replay) seen(idx uint64) {
	if r.base == 0 || idx < r.base {
		r.base = idx
	}
}

// entry appends e, written at l, replacing any entries at or after its
// index (raft's truncation of a conflicting suffix).
func (r *replay) entry(e raftpb.Entry, l loc) error {
	r.seen(e.Index)
	ents := r.state.Entries
	if e.Index <= r.cutoff() {
		return nil // covered by the snapshot
	}
	keep := 0 // of the entries so far
	if len(ents) > 0 {
		first, last := ents[0].Index, ents[len(ents)-1].Index
		switch {
		case e.Index > last+1:
			return fmt.Errorf("entry %d follows entry %d: entries are missing", e.Index, last)
		case e.Index >= first:
			keep = int(e.Index - first)
		}
	}
	// With none so far, the first entry after a purge may start above the
	// snapshot marker that opens the oldest kept segment; finish checks
	// the final gap.
	r.state.Entries = append(ents[:keep], e)
	r.state.locs = append(r.state.locs[:keep], l)
	return nil
}

// snapshot applies a snapshot marker. A snapshot of this log drops the
// entries it covers and keeps the rest, as raft's MemoryStorage.Compact
// does. A snapshot received from a leader replaces the whole log, as
// MemoryStorage.ApplySnapshot does (entries that conflict with it would
// break raft's log matching), and ends the old log's snapshots as ones to
// recover from. A marker no newer than the newest is a segment header repeating it.
func (r *replay) snapshot(m raftpb.SnapshotMetadata, received bool) {
	if m.Index <= r.state.Snapshot.Index {
		r.addMarker(m)
		return
	}
	ents := r.state.Entries
	switch {
	case received:
		// Whatever the log held, raft drops it (MemoryStorage.ApplySnapshot).
		r.state.Entries, r.state.locs, r.markers, r.base = nil, nil, nil, 0
	case len(ents) == 0 || ents[0].Index > m.Index:
		// Nothing to check it against; finish reports a gap if one remains.
	case ents[len(ents)-1].Index < m.Index || ents[m.Index-ents[0].Index].Term != m.Term:
		// Written as a local marker by a version without received markers.
		r.state.Entries, r.state.locs, r.markers, r.base = nil, nil, nil, 0
	case !r.fixed:
		from := m.Index + 1 - ents[0].Index
		r.state.Entries = append([]raftpb.Entry(nil), ents[from:]...)
		r.state.locs = append([]loc(nil), r.state.locs[from:]...)
	}
	r.state.Snapshot = m
	r.addMarker(m)
}

// addMarker adds m to markers, in index order, once.
func (r *replay) addMarker(m raftpb.SnapshotMetadata) {
	if m.Index == 0 {
		return // the empty marker of a log without snapshots
	}
	i, found := slices.BinarySearchFunc(r.markers, m.Index, func(a raftpb.SnapshotMetadata, idx uint64) int {
		return cmp.Compare(a.Index, idx)
	})
	if !found {
		r.markers = slices.Insert(r.markers, i, m)
	}
}

// finish checks that the entries follow the snapshot (or keepFrom) with no
// gap and lists the markers recovery may use.
func (r *replay) finish() error {
	ents := r.state.Entries
	if r.fixed && len(ents) > 0 && ents[0].Index == r.keepFrom {
		ents = ents[1:]
		r.state.Entries, r.state.locs = ents, r.state.locs[1:]
	}
	from := r.state.Snapshot.Index
	if r.fixed {
		from = r.keepFrom
	}
	if len(ents) > 0 && ents[0].Index != from+1 {
		return fmt.Errorf("%w: entries start at %d but the snapshot is at %d", ErrCorrupt, ents[0].Index, from)
	}
	base := r.base
	if base == 0 {
		base = r.state.Snapshot.Index + 1
	}
	r.state.Markers = nil
	for _, m := range r.markers {
		if m.Index+1 >= base {
			r.state.Markers = append(r.state.Markers, m)
		}
	}
	return nil
}

// entryIndex reads the Index of an encoded raftpb.Entry without copying
// its Data, which is most of it. ok is false for anything but the fields
// an Entry has, with the wire types they have; the full decode then says
// what is wrong. As in a decode, the last Index in the record counts.
func entryIndex(b []byte) (idx uint64, ok bool) {
	const ( // raftpb.Entry's fields
		typeField, termField, indexField, dataField = 1, 2, 3, 4
	)
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		switch field, wire := key>>3, key&7; {
		case wire == 0 && (field == typeField || field == termField):
		case wire == 0 && field == indexField:
			idx, ok = v, true
		case wire == 2 && field == dataField && v <= uint64(len(b)):
			b = b[v:]
		default:
			return 0, false
		}
	}
	return idx, ok
}

// headerSnapshot returns the newest snapshot marker among the records that
// open the segment name (a cut repeats the retained markers there), or 0
// if it cannot tell. Recovery ends at that snapshot or a newer one.
func headerSnapshot(fs vfs.FS, name string) uint64 {
	f, rr, err := openSegment(fs, name)
	if err != nil {
		return 0
	}
	defer f.Close()
	var newest uint64
	for {
		rec, bad, err := rr.next()
		if err != nil || bad != nil || rec.typ != typeSnapshotMark {
			return newest
		}
		var m raftpb.SnapshotMetadata
		if m.Unmarshal(rec.payload) != nil {
			return 0
		}
		newest = max(newest, m.Index)
	}
}

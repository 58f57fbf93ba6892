package wal

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// loc is where an entry's record starts in the log: its segment's sequence
// number and the offset in that segment. The zero loc is unknown: no entry
// record starts at offset 0 (a segment opens with its magic or, in format
// v1, a snapshot marker).
type loc struct{ seg, off uint32 }

// makeLoc returns the loc of a record at off in segment seq, or the unknown
// loc if either does not fit (a segment grown past 4 GiB by one batch).
func makeLoc(seq uint64, off int64) loc {
	if seq > math.MaxUint32 || off <= 0 || off > math.MaxUint32 {
		return loc{}
	}
	return loc{seg: uint32(seq), off: uint32(off)}
}

func (l loc) known() bool { return l.off != 0 }

// slot is what the log keeps of every entry, held whole in memory or not:
// 12 bytes, where a held entry costs its data and 48 more.
type slot struct {
	loc
	size uint32 // the entry's encoded size (raftpb.Entry.Size), for raft's size limits
}

// termRun says that the entries from first on, up to the next run, have
// term. Terms change at elections only, so a few runs cover a long log.
type termRun struct{ first, term uint64 }

// entryLog is the raft log as the Storage keeps it (issue 14: memory held
// every entry since the last snapshot, about 100 MB at 1M znodes under
// setData). Every entry after base has a slot; only the newest are held
// whole (mem), and the others are read back from the WAL when raft asks
// for them, for a follower that lags. It is a pure structure: the
// Storage does the locking and I/O.
type entryLog struct {
	base, baseTerm uint64 // the entry before the first: a snapshot or compaction point
	slots          []slot // entry base+1+i
	terms          []termRun
	mem            []raftpb.Entry // the last len(mem) entries, whole
}

// newEntryLog returns an empty log after the entry at index, of term.
func newEntryLog(index, term uint64) entryLog {
	return entryLog{base: index, baseTerm: term}
}

func (l *entryLog) first() uint64    { return l.base + 1 }
func (l *entryLog) last() uint64     { return l.base + uint64(len(l.slots)) }
func (l *entryLog) memFirst() uint64 { return l.last() + 1 - uint64(len(l.mem)) }

// check says whether entries [lo, hi) can be read: ErrCompacted if lo is
// at or before base, ErrUnavailable past the last entry.
func (l *entryLog) check(lo, hi uint64) error {
	switch {
	case lo <= l.base:
		return raft.ErrCompacted
	case hi > l.last()+1 || lo > hi:
		return fmt.Errorf("wal: entries [%d, %d) of a log ending at %d: %w", lo, hi, l.last(), raft.ErrUnavailable)
	}
	return nil
}

// term returns the term of entry i, for i in [base, last].
func (l *entryLog) term(i uint64) (uint64, error) {
	switch {
	case i < l.base:
		return 0, raft.ErrCompacted
	case i == l.base:
		return l.baseTerm, nil
	case i > l.last():
		return 0, raft.ErrUnavailable
	case i >= l.memFirst():
		return l.mem[i-l.memFirst()].Term, nil
	}
	// The run that starts at or before i: the last one whose first <= i.
	r := sort.Search(len(l.terms), func(k int) bool { return l.terms[k].first > i }) - 1
	return l.terms[r].term, nil
}

// append adds ents, which follow on from each other, replacing the
// entries at and after ents[0].Index (raft's truncation of a conflicting
// suffix); locs are where they were written (nil: unknown). Entries at or
// below base are skipped, as MemoryStorage skips them. Data is shared,
// not copied.
func (l *entryLog) append(ents []raftpb.Entry, locs []loc) error {
	if len(ents) == 0 {
		return nil
	}
	if skip := min(uint64(len(ents)), l.first()-min(l.first(), ents[0].Index)); skip > 0 {
		ents = ents[skip:]
		if locs != nil {
			locs = locs[skip:]
		}
		if len(ents) == 0 {
			return nil
		}
	}
	at := ents[0].Index
	if at > l.last()+1 {
		return fmt.Errorf("wal: entry %d after last index %d: %w", at, l.last(), ErrOutOfOrder)
	}
	if at <= l.last() {
		l.truncate(at)
	}
	for i := range ents {
		e := &ents[i]
		sl := slot{size: uint32(min(e.Size(), math.MaxUint32))}
		if locs != nil {
			sl.loc = locs[i]
		}
		l.slots = append(l.slots, sl)
		if n := len(l.terms); n == 0 || l.terms[n-1].term != e.Term {
			l.terms = append(l.terms, termRun{first: e.Index, term: e.Term})
		}
	}
	l.mem = append(l.mem, ents...)
	return nil
}

// truncate drops the entries from at on (base < at <= last). The entries
// held are copied, never overwritten in place: raft may still hold a
// slice of them that Entries returned.
func (l *entryLog) truncate(at uint64) {
	mf := l.memFirst()
	keep := int(max(at, mf) - mf) // of mem, from the front
	l.mem = l.mem[:keep:keep]
	l.slots = l.slots[:at-l.first()]
	r := sort.Search(len(l.terms), func(k int) bool { return l.terms[k].first >= at })
	l.terms = l.terms[:r]
}

// compact drops the entries up to index (base < index <= last), keeping
// index's term as the base.
func (l *entryLog) compact(index uint64) error {
	if index <= l.base {
		return raft.ErrCompacted
	}
	if index > l.last() {
		return fmt.Errorf("wal: compact to %d past the last index %d: %w", index, l.last(), raft.ErrUnavailable)
	}
	term, err := l.term(index)
	if err != nil {
		return err
	}
	if mf := l.memFirst(); index >= mf {
		l.mem = slices.Clone(l.mem[index+1-mf:])
	}
	l.slots = slices.Clone(l.slots[index-l.base:])
	r := sort.Search(len(l.terms), func(k int) bool { return l.terms[k].first > index+1 }) - 1
	l.terms = slices.Clone(l.terms[max(r, 0):])
	l.base, l.baseTerm = index, term
	return nil
}

// evict stops holding whole the entries up to index that can be read back
// (their loc is known), and returns how many it dropped. The rest of mem
// is copied to a new array, so that what raft holds stays untouched and
// the dropped entries' data can be collected.
func (l *entryLog) evict(index uint64) int {
	mf := l.memFirst()
	if index < mf {
		return 0
	}
	n := int(min(index, l.last()) + 1 - mf)
	from := int(mf - l.first())
	for i := range n {
		if !l.slots[from+i].known() {
			n = i
			break
		}
	}
	if n == 0 {
		return 0
	}
	l.mem = slices.Clone(l.mem[n:])
	return n
}

// fit returns how many entries from lo, up to hi, raft's size limit lets
// one Entries call return: at least one, then while the total size stays
// within maxSize (raft's limitSize). base < lo < hi <= last+1.
func (l *entryLog) fit(lo, hi, maxSize uint64) int {
	sl := l.slots[lo-l.first() : hi-l.first()]
	size := uint64(sl[0].size)
	for n := 1; n < len(sl); n++ {
		if size += uint64(sl[n].size); size > maxSize {
			return n
		}
	}
	return len(sl)
}

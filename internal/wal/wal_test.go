package wal

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/vfs/errorfs"
)

const testDir = "/data/log"

var testOpts = Options{SegmentSize: 4096}

// mkEnts returns entries lo..hi of term with recognisable data.
func mkEnts(lo, hi, term uint64) []raftpb.Entry {
	var ents []raftpb.Entry
	for i := lo; i <= hi; i++ {
		ents = append(ents, raftpb.Entry{Index: i, Term: term, Type: raftpb.EntryNormal,
			Data: []byte(fmt.Sprintf("entry %d term %d", i, term))})
	}
	return ents
}

func mustOpen(t testing.TB, fs vfs.FS, opts Options) (*WAL, *State) {
	t.Helper()
	w, st, err := Open(fs, testDir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return w, st
}

func mustSave(t testing.TB, w *WAL, hs raftpb.HardState, ents []raftpb.Entry) {
	t.Helper()
	if err := w.Save(hs, ents); err != nil {
		t.Fatalf("Save: %v", err)
	}
}

// reopen opens the log, checks its state and closes it.
func reopen(t *testing.T, fs vfs.FS, want State) {
	t.Helper()
	reopenWith(t, fs, testOpts, want)
}

// reopenWith is reopen with opts.
func reopenWith(t *testing.T, fs vfs.FS, opts Options, want State) {
	t.Helper()
	w, st := mustOpen(t, fs, opts)
	defer w.Close()
	checkState(t, st, want)
}

// goesOn checks that the WAL w, opened on fs with opts and recovered to
// want, goes on: a new save lands after the recovered entries, and a
// crash after it recovers them all. It closes w.
func goesOn(t *testing.T, w *WAL, fs *vfs.MemFS, opts Options, want State) {
	t.Helper()
	next := want.LastIndex() + 1
	mustSave(t, w, raftpb.HardState{}, mkEnts(next, next, 2))
	w.Close()
	want.Entries = append(want.Entries, mkEnts(next, next, 2)...)
	reopenWith(t, fs.CrashClone(), opts, want)
}

func checkState(t *testing.T, got *State, want State) {
	t.Helper()
	if len(got.Entries) == 0 {
		got.Entries = nil
	}
	if len(want.Entries) == 0 {
		want.Entries = nil
	}
	// Where each entry was read from: checked by reading it back
	// (storage_test.go); here only that there is one per entry.
	if len(got.locs) != len(got.Entries) {
		t.Fatalf("recovered %d entries with %d locations", len(got.Entries), len(got.locs))
	}
	g := *got
	g.locs, want.locs = nil, nil
	got = &g
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("recovered state:\n got hs=%+v snap=%+v ents=%s markers=%v\nwant hs=%+v snap=%+v ents=%s markers=%v",
			got.HardState, got.Snapshot, describe(got.Entries), markerIndexes(got.Markers),
			want.HardState, want.Snapshot, describe(want.Entries), markerIndexes(want.Markers))
	}
}

func markerIndexes(ms []raftpb.SnapshotMetadata) []uint64 {
	var idx []uint64
	for _, m := range ms {
		idx = append(idx, m.Index)
	}
	return idx
}

func describe(ents []raftpb.Entry) string {
	var b strings.Builder
	for _, e := range ents {
		fmt.Fprintf(&b, "%d/%d ", e.Index, e.Term)
	}
	return b.String()
}

func TestSaveAndReopen(t *testing.T) {
	fs := vfs.NewMem()
	w, st := mustOpen(t, fs, testOpts)
	checkState(t, st, State{})
	hs := raftpb.HardState{Term: 1, Vote: 1, Commit: 3}
	mustSave(t, w, raftpb.HardState{}, mkEnts(1, 2, 1))
	mustSave(t, w, hs, mkEnts(3, 5, 1))
	mustSave(t, w, raftpb.HardState{}, nil) // nothing to do
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := State{HardState: hs, Entries: mkEnts(1, 5, 1)}
	reopen(t, fs, want)
	reopen(t, fs, want) // a second recovery sees the same
}

// TestTruncation checks that entries at or below the last index replace the
// conflicting suffix, in memory and on replay.
// Ref: raft paper §5.3 (a follower's conflicting entries are overwritten).
func TestTruncation(t *testing.T) {
	tests := []struct {
		name  string
		saves [][]raftpb.Entry
		want  []raftpb.Entry
	}{
		{"overwrite suffix", [][]raftpb.Entry{mkEnts(1, 10, 1), mkEnts(6, 8, 2)},
			append(mkEnts(1, 5, 1), mkEnts(6, 8, 2)...)},
		{"overwrite all", [][]raftpb.Entry{mkEnts(1, 10, 1), mkEnts(1, 2, 3)}, mkEnts(1, 2, 3)},
		{"overwrite last", [][]raftpb.Entry{mkEnts(1, 3, 1), mkEnts(3, 4, 2)},
			append(mkEnts(1, 2, 1), mkEnts(3, 4, 2)...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			w, _ := mustOpen(t, fs, testOpts)
			for _, ents := range tc.saves {
				mustSave(t, w, raftpb.HardState{}, ents)
			}
			w.Close()
			reopen(t, fs, State{Entries: tc.want})
		})
	}
}

func TestSaveOutOfOrder(t *testing.T) {
	fs := vfs.NewMem()
	w, _ := mustOpen(t, fs, testOpts)
	mustSave(t, w, raftpb.HardState{}, mkEnts(1, 3, 1))
	for _, ents := range [][]raftpb.Entry{
		mkEnts(5, 6, 1),                          // gap after the log
		{mkEnts(4, 4, 1)[0], mkEnts(6, 6, 1)[0]}, // gap inside the batch
	} {
		if err := w.Save(raftpb.HardState{}, ents); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("Save(%s) = %v, want ErrOutOfOrder", describe(ents), err)
		}
	}
	mustSave(t, w, raftpb.HardState{}, mkEnts(4, 4, 1)) // still usable
	w.Close()
	reopen(t, fs, State{Entries: mkEnts(1, 4, 1)})
}

// TestGapIsCorruption: a log whose entries skip an index (which Save
// refuses to write) is reported, not served.
func TestGapIsCorruption(t *testing.T) {
	fs := vfs.NewMem()
	w, _ := mustOpen(t, fs, testOpts)
	mustSave(t, w, raftpb.HardState{}, mkEnts(1, 3, 1))
	w.Close()
	name, data := lastSegment(t, fs)
	end := scan(data).end
	gap := appendProtoRecord(nil, typeEntry, &mkEnts(5, 5, 1)[0])
	replaceFile(t, fs, name, append(data[:end:end], gap...))
	_, _, err := Open(fs, testDir, testOpts)
	var ce *CorruptionError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Offset != end {
		t.Fatalf("Open = %v, want ErrCorrupt at %d", err, end)
	}
}

func TestSnapshotMarker(t *testing.T) {
	cs := raftpb.ConfState{Voters: []uint64{1, 2, 3}}
	tests := []struct {
		name     string
		marker   raftpb.SnapshotMetadata
		received bool
		after    []raftpb.Entry
		want     []raftpb.Entry
	}{
		// Ref: raft paper §7 (log compaction keeps the entries after the snapshot).
		{"local snapshot keeps later entries", raftpb.SnapshotMetadata{Index: 6, Term: 1, ConfState: cs}, false, nil, mkEnts(7, 10, 1)},
		{"snapshot at last index", raftpb.SnapshotMetadata{Index: 10, Term: 1, ConfState: cs}, false, nil, nil},
		// Ref: raft paper §7 (InstallSnapshot: discard the entire log).
		{"received snapshot replaces the log", raftpb.SnapshotMetadata{Index: 6, Term: 2, ConfState: cs}, true, nil, nil},
		{"received snapshot matching the log", raftpb.SnapshotMetadata{Index: 6, Term: 1, ConfState: cs}, true, nil, nil},
		{"received snapshot, then entries", raftpb.SnapshotMetadata{Index: 6, Term: 2, ConfState: cs}, true,
			mkEnts(7, 8, 2), mkEnts(7, 8, 2)},
		{"received snapshot beyond the log", raftpb.SnapshotMetadata{Index: 50, Term: 2, ConfState: cs}, true,
			mkEnts(51, 52, 2), mkEnts(51, 52, 2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			w, _ := mustOpen(t, fs, testOpts)
			mustSave(t, w, raftpb.HardState{Term: 1, Commit: 5}, mkEnts(1, 10, 1))
			save := w.SaveSnapshotMarker
			if tc.received {
				save = w.SaveReceivedSnapshotMarker
			}
			if err := save(tc.marker); err != nil {
				t.Fatal(err)
			}
			hs := raftpb.HardState{Term: 2, Commit: tc.marker.Index}
			mustSave(t, w, hs, tc.after)
			w.Close()
			reopen(t, fs, State{HardState: hs, Snapshot: tc.marker, Entries: tc.want, Markers: []raftpb.SnapshotMetadata{tc.marker}})
		})
	}
}

// TestSegmentsAndRelease writes enough to cut several segments, then checks
// that ReleaseTo removes only whole segments below the snapshot and that
// the log still recovers fully.
func TestSegmentsAndRelease(t *testing.T) {
	fs := vfs.NewMem()
	w, _ := mustOpen(t, fs, testOpts)
	var hs raftpb.HardState
	for i := uint64(1); i <= 1000; i += 10 {
		hs = raftpb.HardState{Term: 1, Commit: i}
		mustSave(t, w, hs, mkEnts(i, i+9, 1))
	}
	before := segmentNames(t, fs)
	if len(before) < 4 {
		t.Fatalf("only %d segments: %v", len(before), before)
	}
	// Nothing may go before a snapshot covers it.
	if err := w.ReleaseTo(500); err != nil {
		t.Fatal(err)
	}
	if got := segmentNames(t, fs); len(got) != len(before) {
		t.Fatalf("ReleaseTo without a snapshot removed segments: %v -> %v", before, got)
	}
	snap := raftpb.SnapshotMetadata{Index: 500, Term: 1}
	if err := w.SaveSnapshotMarker(snap); err != nil {
		t.Fatal(err)
	}
	if err := w.ReleaseTo(500); err != nil {
		t.Fatal(err)
	}
	after := segmentNames(t, fs)
	if len(after) >= len(before) {
		t.Fatalf("ReleaseTo(500) removed nothing: %v", after)
	}
	for _, name := range before[:len(before)-len(after)] {
		s, _ := parseSegmentName(name)
		next, _ := parseSegmentName(before[s.seq+1-mustSeq(t, before[0])])
		if next.first > 501 {
			t.Fatalf("removed %s, whose successor starts at %d > 501", name, next.first)
		}
	}
	w.Close()
	reopen(t, fs.CrashClone(), State{HardState: hs, Snapshot: snap, Entries: mkEnts(501, 1000, 1), Markers: []raftpb.SnapshotMetadata{snap}})
}

func mustSeq(t *testing.T, name string) uint64 {
	s, ok := parseSegmentName(name)
	if !ok {
		t.Fatalf("bad segment name %q", name)
	}
	return s.seq
}

func segmentNames(t *testing.T, fs vfs.FS) []string {
	t.Helper()
	names, err := fs.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	var segs []string
	for _, n := range names {
		if _, ok := parseSegmentName(n); ok {
			segs = append(segs, n)
		}
	}
	return segs
}

// bigEntry is entry i of term 1 with more data than a testOpts segment
// holds: saving it cuts a new segment.
func bigEntry(i uint64) raftpb.Entry {
	return raftpb.Entry{Index: i, Term: 1, Data: make([]byte, testOpts.SegmentSize)}
}

func TestMissingSegmentIsCorruption(t *testing.T) {
	fs := vfs.NewMem()
	w, _ := mustOpen(t, fs, testOpts)
	for i := range uint64(3) { // three entries too big to share a segment
		mustSave(t, w, raftpb.HardState{}, []raftpb.Entry{bigEntry(i + 1)})
	}
	w.Close()
	segs := segmentNames(t, fs)
	if len(segs) < 3 {
		t.Fatalf("segments %v; want 3", segs)
	}
	if err := fs.Remove(filepath.Join(testDir, segs[1])); err != nil {
		t.Fatal(err)
	}
	_, _, err := Open(fs, testDir, testOpts)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open = %v, want ErrCorrupt", err)
	}
}

// TestRestartsReuseTheLastSegment: Ref: issue 13, defect 7. Every Open
// used to cut (and preallocate) a new segment and keep the old ones, so a
// crash loop filled the disk. Opens, each followed by a small save as a
// restarted raft member makes (a new term, an empty entry), go on in the
// last segment's preallocated space, and everything is recovered.
func TestRestartsReuseTheLastSegment(t *testing.T) {
	fs := vfs.NewMem()
	w, _ := mustOpen(t, fs, testOpts)
	mustSave(t, w, raftpb.HardState{Term: 1}, mkEnts(1, 2, 1))
	w.Close()
	for i := range uint64(5) {
		w, _ := mustOpen(t, fs, testOpts)
		mustSave(t, w, raftpb.HardState{Term: 1}, mkEnts(3+i, 3+i, 1))
		w.Close()
		fs = fs.CrashClone()
	}
	for range 5 { // opens that write nothing
		w, _ := mustOpen(t, fs, testOpts)
		w.Close()
	}
	if segs := segmentNames(t, fs); len(segs) != 1 {
		t.Fatalf("segments after 11 opens: %v, want 1", segs)
	}
	reopen(t, fs.CrashClone(), State{HardState: raftpb.HardState{Term: 1}, Entries: mkEnts(1, 7, 1)})
}

func TestLeftoverTempRemoved(t *testing.T) {
	fs := vfs.NewMem()
	fs.MkdirAll(testDir, 0o755)
	f, _ := fs.Create(filepath.Join(testDir, segment{seq: 0, first: 1}.name()+".tmp"))
	f.Write([]byte("half-built segment"))
	f.Close()
	w, st := mustOpen(t, fs, testOpts)
	w.Close()
	checkState(t, st, State{})
	names, _ := fs.List(testDir)
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			t.Fatalf("leftover %s not removed", n)
		}
	}
}

// lastSegment returns the path and bytes of the newest segment.
func lastSegment(t *testing.T, fs vfs.FS) (string, []byte) {
	t.Helper()
	segs := segmentNames(t, fs)
	name := filepath.Join(testDir, segs[len(segs)-1])
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return name, data
}

func replaceFile(t *testing.T, fs *vfs.MemFS, name string, data []byte) {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	f.Close()
}

// TestTornTailEveryOffset cuts the last segment at every byte offset past
// its first record, both as a short file and as a preallocated one whose
// tail is zeros, and checks that recovery keeps exactly the records that
// end before the cut.
func TestTornTailEveryOffset(t *testing.T) {
	base := vfs.NewMem()
	w, _ := mustOpen(t, base, testOpts)
	hs := raftpb.HardState{Term: 1, Vote: 1, Commit: 2}
	mustSave(t, w, raftpb.HardState{}, mkEnts(1, 3, 1))
	mustSave(t, w, hs, mkEnts(4, 6, 1))
	w.Close()
	name, data := lastSegment(t, base)
	r := scan(data)
	if r.bad != nil || len(r.records) != 2+6+1 {
		t.Fatalf("setup: %d records, bad %v", len(r.records), r.bad)
	}
	// From the second record on: a segment's first record was fsynced
	// before the segment was renamed into place, so it is never torn.
	for cut := r.records[1].off; cut <= r.end; cut++ {
		for _, prealloc := range []bool{false, true} {
			t.Run(fmt.Sprintf("cut=%d/prealloc=%v", cut, prealloc), func(t *testing.T) {
				fs := base.CrashClone()
				torn := append([]byte(nil), data[:cut]...)
				if prealloc {
					torn = append(torn, make([]byte, len(data)-int(cut))...)
				}
				replaceFile(t, fs, name, torn)
				n := intact(data, r, cut, prealloc)
				want := replayPrefix(t, r, n)
				w, st := mustOpen(t, fs, testOpts)
				checkState(t, st, want)
				goesOn(t, w, fs, testOpts, want)
				checkBroken(t, fs, name, data, cut, r, n)
			})
		}
	}
}

// intact counts the records that survive a cut at cut: those that end
// before it, or, in a preallocated file, whose missing bytes were zeros
// anyway (the zero fill completes them).
func intact(data []byte, r scanResult, cut int64, prealloc bool) int {
	for i := range r.records {
		end := r.end
		if i+1 < len(r.records) {
			end = r.records[i+1].off
		}
		if end > cut && !(prealloc && allZero(data[cut:end])) {
			return i
		}
	}
	return len(r.records)
}

// replayPrefix is the state of the first n records.
func replayPrefix(t *testing.T, r scanResult, n int) State {
	t.Helper()
	var rp replay
	for _, rec := range r.records[:n] {
		if err := rp.apply(rec, 0); err != nil {
			t.Fatal(err)
		}
	}
	return rp.state
}

// checkBroken checks that a torn record's bytes were kept aside, unless
// the part that was written is all zeros: that reads as a clean end.
func checkBroken(t *testing.T, fs vfs.FS, name string, data []byte, cut int64, r scanResult, n int) {
	t.Helper()
	wantBroken := n < len(r.records) && r.records[n].off < cut && !allZero(data[r.records[n].off:cut])
	_, err := fs.Stat(name + ".broken")
	if !wantBroken && err == nil {
		t.Fatalf("cut at %d (%d intact records) left a .broken file", cut, n)
	}
	if wantBroken && err != nil {
		t.Fatalf("torn record at %d: no .broken file: %v", cut, err)
	}
}

// TestCorruptionEveryByte flips each byte of every record that is followed
// by another, and expects Open to refuse with the file and the offset.
func TestCorruptionEveryByte(t *testing.T) {
	base := vfs.NewMem()
	w, _ := mustOpen(t, base, testOpts)
	mustSave(t, w, raftpb.HardState{Term: 1}, mkEnts(1, 4, 1))
	w.Close()
	name, data := lastSegment(t, base)
	r := scan(data)
	for i, rec := range r.records[:len(r.records)-1] {
		for b := rec.off; b < r.records[i+1].off; b++ {
			fs := base.CrashClone()
			bad := append([]byte(nil), data...)
			bad[b] ^= 0x10
			replaceFile(t, fs, name, bad)
			_, _, err := Open(fs, testDir, testOpts)
			var ce *CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d flipped: Open = %v, want a CorruptionError", b, err)
			}
			if ce.File != name || ce.Offset != rec.off {
				t.Fatalf("byte %d flipped: error at %s:%d, want %s:%d", b, ce.File, ce.Offset, name, rec.off)
			}
			if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), fmt.Sprint(rec.off)) {
				t.Fatalf("error %q does not name the file and offset", err)
			}
		}
	}
}

// TestCorruptionInEarlierSegment: a bad last record is a torn tail only in
// the last segment; in an earlier one it was fsynced, so it is corruption.
func TestCorruptionInEarlierSegment(t *testing.T) {
	fs := vfs.NewMem()
	w, _ := mustOpen(t, fs, testOpts)
	mustSave(t, w, raftpb.HardState{}, mkEnts(1, 3, 1))
	w.Close()
	name, data := lastSegment(t, fs)
	w, _ = mustOpen(t, fs, testOpts)
	mustSave(t, w, raftpb.HardState{}, []raftpb.Entry{bigEntry(4)}) // cuts segment 1; segment 0 is no longer last
	w.Close()
	r := scan(data)
	bad := append([]byte(nil), data...)
	bad[r.end-1] ^= 1
	replaceFile(t, fs, name, bad)
	_, _, err := Open(fs, testDir, testOpts)
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.File != name || ce.Offset != r.records[len(r.records)-1].off {
		t.Fatalf("Open = %v, want corruption in %s", err, name)
	}
}

// syncCounter counts syncs and writes of segment files.
type syncCounter struct{ syncs, writes atomic.Int64 }

func (c *syncCounter) MaybeError(op errorfs.Op) error {
	switch op.Kind {
	case errorfs.OpFileSync:
		c.syncs.Add(1)
	case errorfs.OpFileWrite:
		c.writes.Add(1)
	}
	return nil
}

// TestGroupCommit: one Save of many entries is one write and one fsync.
func TestGroupCommit(t *testing.T) {
	for _, n := range []int{1, 64, 500} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := &syncCounter{}
			fs := errorfs.Wrap(vfs.NewMem(), c)
			w, _ := mustOpen(t, fs, Options{SegmentSize: 1 << 20})
			defer w.Close()
			c.syncs.Store(0)
			c.writes.Store(0)
			mustSave(t, w, raftpb.HardState{Term: 1, Commit: 1}, mkEnts(1, uint64(n), 1))
			if s, wr := c.syncs.Load(), c.writes.Load(); s != 1 || wr != 1 {
				t.Fatalf("Save of %d entries: %d syncs, %d writes; want 1 and 1", n, s, wr)
			}
		})
	}
}

// TestLazyCommit: with LazyCommit, a HardState that only moves the commit
// index is written but not synced; entries, a new term or a new vote are
// synced; without it everything is. What was written unsynced is still
// recovered after a clean close.
func TestLazyCommit(t *testing.T) {
	steps := []struct {
		name string
		hs   raftpb.HardState
		ents []raftpb.Entry
		lazy int64 // syncs with LazyCommit
	}{
		{"entries", raftpb.HardState{Term: 2, Vote: 1, Commit: 1}, mkEnts(1, 3, 2), 1},
		{"commit only", raftpb.HardState{Term: 2, Vote: 1, Commit: 3}, nil, 0},
		{"new vote", raftpb.HardState{Term: 2, Vote: 3, Commit: 3}, nil, 1},
		{"new term", raftpb.HardState{Term: 3, Vote: 0, Commit: 3}, nil, 1},
		{"commit only again", raftpb.HardState{Term: 3, Vote: 0, Commit: 4}, mkEnts(4, 4, 3), 1},
	}
	for _, lazy := range []bool{false, true} {
		t.Run(fmt.Sprintf("lazy=%v", lazy), func(t *testing.T) {
			c := &syncCounter{}
			fs := errorfs.Wrap(vfs.NewMem(), c)
			w, _ := mustOpen(t, fs, Options{SegmentSize: 1 << 20, LazyCommit: lazy})
			for _, st := range steps {
				c.syncs.Store(0)
				c.writes.Store(0)
				mustSave(t, w, st.hs, st.ents)
				want := int64(1)
				if lazy {
					want = st.lazy
				}
				if s, wr := c.syncs.Load(), c.writes.Load(); s != want || wr != 1 {
					t.Errorf("%s: %d syncs, %d writes; want %d and 1", st.name, s, wr, want)
				}
			}
			w.Close()
			_, got := mustOpen(t, fs, Options{SegmentSize: 1 << 20, LazyCommit: lazy})
			if want := steps[len(steps)-1].hs; got.HardState != want {
				t.Errorf("recovered %+v; want %+v", got.HardState, want)
			}
		})
	}
}

// SetLazyCommit changes what the next commit-only hard state costs: the
// replica turns it off when its member becomes the sole voter of an
// ensemble, whose log was opened lazy.
func TestSetLazyCommit(t *testing.T) {
	c := &syncCounter{}
	fs := errorfs.Wrap(vfs.NewMem(), c)
	w, _ := mustOpen(t, fs, Options{SegmentSize: 1 << 20, LazyCommit: true})
	defer w.Close()
	mustSave(t, w, raftpb.HardState{Term: 2, Vote: 1, Commit: 1}, mkEnts(1, 3, 2))
	for i, lazy := range []bool{true, false, true} {
		w.SetLazyCommit(lazy)
		c.syncs.Store(0)
		mustSave(t, w, raftpb.HardState{Term: 2, Vote: 1, Commit: uint64(i + 2)}, nil)
		want := int64(1)
		if lazy {
			want = 0
		}
		if got := c.syncs.Load(); got != want {
			t.Errorf("commit %d with LazyCommit %v: %d syncs; want %d", i+2, lazy, got, want)
		}
	}
}

// A hard state no newer than the one the log holds (its commit index
// saved with its entries, then named again by raft) is not written, and
// an older commit index never replaces a newer one.
func TestSaveSkipsAHardStateItHolds(t *testing.T) {
	c := &syncCounter{}
	fs := errorfs.Wrap(vfs.NewMem(), c)
	w, _ := mustOpen(t, fs, Options{SegmentSize: 1 << 20})
	mustSave(t, w, raftpb.HardState{Term: 2, Vote: 1, Commit: 3}, mkEnts(1, 3, 2))
	for _, hs := range []raftpb.HardState{{Term: 2, Vote: 1, Commit: 3}, {Term: 2, Vote: 1, Commit: 2}} {
		c.syncs.Store(0)
		c.writes.Store(0)
		mustSave(t, w, hs, nil)
		if s, wr := c.syncs.Load(), c.writes.Load(); s != 0 || wr != 0 {
			t.Errorf("commit %d after commit 3 saved: %d syncs, %d writes; want none", hs.Commit, s, wr)
		}
	}
	c.syncs.Store(0)
	mustSave(t, w, raftpb.HardState{Term: 2, Vote: 1, Commit: 4}, nil) // newer: written, and synced
	if s := c.syncs.Load(); s != 1 {
		t.Errorf("a newer commit index: %d syncs; want 1", s)
	}
	w.Close()
	if _, got := mustOpen(t, fs, Options{SegmentSize: 1 << 20}); got.HardState.Commit != 4 {
		t.Errorf("recovered %+v; want commit 4", got.HardState)
	}
}

// TestStickyError: after a failed fsync the WAL refuses appends without
// touching the disk again, and never retries the sync.
func TestStickyError(t *testing.T) {
	var failSync atomic.Bool
	var ops atomic.Int64
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		ops.Add(1)
		if op.Kind == errorfs.OpFileSync && failSync.Load() {
			return errorfs.ErrInjected
		}
		return nil
	})
	mem := vfs.NewMem()
	w, _ := mustOpen(t, errorfs.Wrap(mem, inj), testOpts)
	mustSave(t, w, raftpb.HardState{}, mkEnts(1, 2, 1))
	failSync.Store(true)
	err := w.Save(raftpb.HardState{}, mkEnts(3, 3, 1))
	if !errors.Is(err, ErrBroken) || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Save with failing sync = %v, want ErrBroken wrapping the injected error", err)
	}
	failSync.Store(false)
	before := ops.Load()
	for _, call := range []func() error{
		func() error { return w.Save(raftpb.HardState{}, mkEnts(3, 3, 1)) },
		func() error { return w.SaveSnapshotMarker(raftpb.SnapshotMetadata{Index: 1, Term: 1}) },
	} {
		if err := call(); !errors.Is(err, ErrBroken) || !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("append after failure = %v, want sticky ErrBroken", err)
		}
	}
	if ops.Load() != before {
		t.Fatalf("broken WAL did %d more disk operations", ops.Load()-before)
	}
	if !errors.Is(w.Err(), errorfs.ErrInjected) {
		t.Fatalf("Err() = %v", w.Err())
	}
	w.Close()
	reopen(t, mem.CrashClone(), State{Entries: mkEnts(1, 2, 1)})
}

// TestCrash: acknowledged saves survive a crash, unacknowledged ones (the
// write happened, the fsync failed) do not.
func TestCrash(t *testing.T) {
	var failSync atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileSync && failSync.Load() {
			return errorfs.ErrInjected
		}
		return nil
	})
	mem := vfs.NewMem()
	w, _ := mustOpen(t, errorfs.Wrap(mem, inj), testOpts)
	hs := raftpb.HardState{Term: 1, Commit: 5}
	mustSave(t, w, raftpb.HardState{}, mkEnts(1, 3, 1))
	mustSave(t, w, hs, mkEnts(4, 5, 1))
	failSync.Store(true)
	if err := w.Save(raftpb.HardState{Term: 1, Commit: 8}, mkEnts(6, 8, 1)); err == nil {
		t.Fatal("Save with failing sync succeeded")
	}
	// Without a crash the written records are still in the file; after one,
	// exactly the synced ones are.
	reopen(t, mem.CrashClone(), State{HardState: hs, Entries: mkEnts(1, 5, 1)})
	w.Close()
	w2, st := mustOpen(t, mem, testOpts)
	w2.Close()
	if st.LastIndex() != 8 {
		t.Fatalf("no crash: last index %d, want the 8 written", st.LastIndex())
	}
}

// forceSync=no: appends are written but not fsynced (a process crash loses
// nothing, the page cache has them); cutting a segment still syncs.
func TestNoSyncSkipsAppendFsyncs(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprint("NoSync=", noSync), func(t *testing.T) {
			mem := vfs.NewMem()
			var syncs atomic.Int64
			fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
				if op.Kind == errorfs.OpFileSync {
					syncs.Add(1)
				}
				return nil
			}))
			opts := testOpts
			opts.NoSync = noSync
			w, _ := mustOpen(t, fs, opts)
			before := syncs.Load()
			for i := uint64(1); i <= 10; i++ {
				mustSave(t, w, raftpb.HardState{Term: 1, Commit: i}, mkEnts(i, i, 1))
			}
			got := syncs.Load() - before
			w.Close()
			if want := int64(10); noSync && got != 0 || !noSync && got != want {
				t.Fatalf("%d fsyncs for 10 saves with NoSync=%v", got, noSync)
			}
			reopen(t, mem, State{HardState: raftpb.HardState{Term: 1, Commit: 10}, Entries: mkEnts(1, 10, 1)})
		})
	}
}

// TestLazyCommitTornBeforeCut: a lazily written HardState at the end of a
// segment, then a Save that cuts a new one, then a power cut that tears
// the lazy record. The old segment's tail is synced before the cut, so
// the log recovers; without that the torn record sat in the middle of the
// log and the server refused to start for good (found by internal/sim,
// seed 85).
func TestLazyCommitTornBeforeCut(t *testing.T) {
	mem := vfs.NewMem()
	opts := Options{SegmentSize: 4096, LazyCommit: true}
	w, _ := mustOpen(t, mem, opts)
	hs := raftpb.HardState{Term: 1, Vote: 1, Commit: 0}
	var i uint64 = 1
	for ; i < 200; i++ {
		mustSave(t, w, hs, mkEnts(i, i, 1))
		hs.Commit = i - 1
		mustSave(t, w, hs, nil) // commit only: lazy, unsynced
		if len(w.segs) > 1 {
			break
		}
	}
	if len(w.segs) < 2 {
		t.Fatal("no segment was cut: the test does not test a cut")
	}
	// Power cut: of every write since the last sync, a few bytes survive.
	torn := mem.CrashCloneTorn(func(string, int) int { return 5 })
	_, st := mustOpen(t, torn, opts)
	if st.LastIndex() != i {
		t.Errorf("recovered up to entry %d; want %d", st.LastIndex(), i)
	}
}

package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// v1Opts is how testdata/v1log was written (by the v1 code of commit
// e1ccb6e): segments of 512 bytes, so that it spans four of them.
var v1Opts = Options{SegmentSize: 512}

// v1State is what testdata/v1log holds: entries 1..40 of term 1 saved in
// batches of 4, each with a HardState, a snapshot marker at 12 after the
// fifth batch, and a last HardState committing 40.
func v1State() State {
	snap := raftpb.SnapshotMetadata{Index: 12, Term: 1, ConfState: raftpb.ConfState{Voters: []uint64{1}}}
	return State{
		HardState: raftpb.HardState{Term: 1, Vote: 1, Commit: 40},
		Snapshot:  snap,
		Entries:   mkEnts(13, 40, 1),
		Markers:   []raftpb.SnapshotMetadata{snap},
	}
}

// loadV1 copies testdata/v1log into a MemFS at testDir and returns it with
// the segment names, oldest first.
func loadV1(t *testing.T) (*vfs.MemFS, []string) {
	t.Helper()
	names, err := filepath.Glob("testdata/v1log/*.wal")
	if err != nil || len(names) < 2 {
		t.Fatalf("v1 fixture: %v %v", names, err)
	}
	fs := vfs.NewMem()
	if err := fs.MkdirAll(testDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var segs []string
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if f, _ := frameOf(data); f != (v1Frame{}) {
			t.Fatalf("fixture %s is not v1", n)
		}
		seg := filepath.Join(testDir, filepath.Base(n))
		replaceFile(t, fs, seg, data)
		segs = append(segs, seg)
	}
	if err := fs.SyncDir(testDir); err != nil {
		t.Fatal(err)
	}
	return fs, segs
}

// segmentIsV1 reports whether the segment name holds format v1.
func segmentIsV1(t *testing.T, fs vfs.FS, name string) bool {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var first [magicSize]byte
	if _, err := f.Read(first[:]); err != nil {
		t.Fatal(err)
	}
	fr, _ := frameOf(first[:])
	return fr == (v1Frame{})
}

// TestV1LogRecovered: a data directory written by format v1 is recovered
// whole; Open cuts a v2 segment once, appends go there, and the v1
// segments are released like any other once a snapshot covers them.
func TestV1LogRecovered(t *testing.T) {
	fs, v1segs := loadV1(t)
	var scanned int
	if err := Scan(fs, testDir, func(r Record) error {
		if r.Entry != nil {
			scanned++
		}
		return nil
	}); err != nil || scanned != 40 {
		t.Fatalf("Scan of the v1 log: %d entries, %v; want 40", scanned, err)
	}
	w, st := mustOpen(t, fs, v1Opts)
	checkState(t, st, v1State())
	segs := segmentNames(t, fs)
	if len(segs) != len(v1segs)+1 {
		t.Fatalf("segments after Open: %v; want the %d v1 ones and a new one", segs, len(v1segs))
	}
	if newest := filepath.Join(testDir, segs[len(segs)-1]); segmentIsV1(t, fs, newest) {
		t.Fatalf("the new segment %s is v1", newest)
	}
	mustSave(t, w, raftpb.HardState{Term: 2, Vote: 1, Commit: 41}, mkEnts(41, 42, 2))
	w.Close()

	want := v1State()
	want.HardState = raftpb.HardState{Term: 2, Vote: 1, Commit: 41}
	want.Entries = append(want.Entries, mkEnts(41, 42, 2)...)
	fs = fs.CrashClone()
	w, st = mustOpen(t, fs, v1Opts)
	checkState(t, st, want)
	if again := segmentNames(t, fs); len(again) != len(segs) {
		t.Fatalf("a second Open cut another segment: %v", again)
	}
	// ReadFrom reads across both formats too.
	older, err := w.ReadFrom(12)
	if err != nil {
		t.Fatalf("ReadFrom(12): %v", err)
	}
	checkState(t, older, want)

	// A snapshot at 42 covers every v1 entry: the v1 segments go.
	snap := raftpb.SnapshotMetadata{Index: 42, Term: 2, ConfState: raftpb.ConfState{Voters: []uint64{1}}}
	if err := w.SaveSnapshotMarker(snap); err != nil {
		t.Fatal(err)
	}
	if err := w.ReleaseTo(42); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, n := range segmentNames(t, fs) {
		if segmentIsV1(t, fs, filepath.Join(testDir, n)) {
			t.Fatalf("v1 segment %s kept after a release past it", n)
		}
	}
	reopen(t, fs.CrashClone(), State{HardState: want.HardState, Snapshot: snap, Markers: []raftpb.SnapshotMetadata{snap}})
}

// TestV1TornTail: a torn tail of a v1 last segment (what a crash of the
// v1 version left) is cut at every cut point, as before, and the log goes
// on in a new v2 segment.
func TestV1TornTail(t *testing.T) {
	base, segs := loadV1(t)
	name := segs[len(segs)-1]
	_, data := lastSegment(t, base)
	r := scan(data)
	if r.bad != nil {
		t.Fatalf("fixture: %v", r.bad)
	}
	// The v1 state before the last segment's records: replay the earlier
	// segments, then the last one's prefix.
	var earlier []record
	for _, s := range segs[:len(segs)-1] {
		_, d := readFile(t, base, s)
		earlier = append(earlier, scan(d).records...)
	}
	for cut := r.records[1].off; cut <= r.end; cut++ {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			fs := base.CrashClone()
			torn := append(append([]byte(nil), data[:cut]...), make([]byte, len(data)-int(cut))...)
			replaceFile(t, fs, name, torn)
			n := intact(data, r, cut, true)
			want := replayPrefix(t, scanResult{records: append(append([]record(nil), earlier...), r.records...)}, len(earlier)+n)
			want.Markers = v1State().Markers // set by replay.finish, which replayPrefix skips
			w, st := mustOpen(t, fs, v1Opts)
			checkState(t, st, want)
			goesOn(t, w, fs, v1Opts, want)
		})
	}
}

// TestV1Corruption: a flipped byte in any v1 record followed by another is
// corruption at that record, as before.
func TestV1Corruption(t *testing.T) {
	base, segs := loadV1(t)
	for _, name := range []string{segs[0], segs[len(segs)-1]} {
		_, data := readFile(t, base, name)
		r := scan(data)
		for i, rec := range r.records[:len(r.records)-1] {
			for b := rec.off; b < r.records[i+1].off; b++ {
				fs := base.CrashClone()
				bad := bytes.Clone(data)
				bad[b] ^= 0x10
				replaceFile(t, fs, name, bad)
				_, _, err := Open(fs, testDir, v1Opts)
				var ce *CorruptionError
				if !errors.As(err, &ce) || ce.File != name || ce.Offset != rec.off {
					t.Fatalf("%s: byte %d flipped: Open = %v; want a *CorruptionError at %d", name, b, err, rec.off)
				}
			}
		}
	}
}

func readFile(t *testing.T, fs vfs.FS, name string) (string, []byte) {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	return name, buf.Bytes()
}

// TestFailEveryOpDuringOpenV1 fails operation i of an Open of the v1 log
// (which cuts a v2 segment) and of one Save after it, for every i: Open
// either succeeds with the whole state or fails with the injected error,
// and a later Open on the underlying FS recovers everything, with and
// without a crash in between.
func TestFailEveryOpDuringOpenV1(t *testing.T) {
	base, _ := loadV1(t)
	failEveryOpDuringOpen(t, base, v1State(), v1Opts)
}

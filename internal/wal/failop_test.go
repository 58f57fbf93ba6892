package wal

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/vfs/errorfs"
)

var injectedErrors = []error{errorfs.ErrInjected, errorfs.ErrNoSpace, errorfs.ErrShortWrite}

const (
	batchSize  = 5
	batches    = 20
	markerAt   = 10 // after this many batches, a snapshot marker ...
	markerIdx  = 30 // ... at this index, then ReleaseTo it
	failOpSegs = 1024
)

// armedCounter counts and fails operations only once armed, so a test can
// aim at the operations of Save rather than Open's.
type armedCounter struct {
	armed atomic.Bool
	c     *errorfs.Counter
}

func (a *armedCounter) MaybeError(op errorfs.Op) error {
	if !a.armed.Load() {
		return nil
	}
	return a.c.MaybeError(op)
}

// saveRun is what a workload got acknowledged before its first error.
type saveRun struct {
	acked       uint64 // entries 1..acked were acknowledged
	hs          raftpb.HardState
	failedUpTo  uint64 // entries acked+1..failedUpTo were in the failed Save
	failedHS    raftpb.HardState
	markerAcked bool
	markerTried bool
}

// workload saves batches until one fails, with a snapshot marker and a
// purge in the middle. It stops at the first error, as the replica does.
func workload(t *testing.T, w *WAL) saveRun {
	var run saveRun
	for b := 0; b < batches; b++ {
		if b == markerAt {
			run.markerTried = true
			if err := w.SaveSnapshotMarker(raftpb.SnapshotMetadata{Index: markerIdx, Term: 1}); err != nil {
				checkBrokenErr(t, err)
				return run
			}
			run.markerAcked = true
			// A failed purge is reported but leaves the WAL working.
			if err := w.ReleaseTo(markerIdx); err != nil && !errors.Is(err, syscall.EIO) && !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("ReleaseTo: %v", err)
			}
		}
		lo := run.acked + 1
		hi := lo + batchSize - 1
		hs := raftpb.HardState{Term: 1, Vote: 1, Commit: hi}
		if err := w.Save(hs, mkEnts(lo, hi, 1)); err != nil {
			checkBrokenErr(t, err)
			run.failedUpTo, run.failedHS = hi, hs
			// Sticky: the next batch is refused too.
			if err := w.Save(hs, mkEnts(hi+1, hi+1, 1)); !errors.Is(err, ErrBroken) {
				t.Fatalf("Save after a failed Save = %v, want ErrBroken", err)
			}
			return run
		}
		run.acked, run.hs = hi, hs
	}
	return run
}

func checkBrokenErr(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrBroken) || !errors.Is(err, syscall.EIO) && !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append error %v: want ErrBroken wrapping the injected error", err)
	}
}

// checkRecovered: nothing acknowledged is lost, nothing partial is seen.
// Entries of the failed Save may be there (a prefix of them: each record is
// whole or absent); its HardState only if all its entries are.
func checkRecovered(t *testing.T, st *State, run saveRun) {
	t.Helper()
	snap := st.Snapshot.Index
	switch {
	case run.markerAcked && snap != markerIdx,
		!run.markerTried && snap != 0,
		snap != 0 && snap != markerIdx:
		t.Fatalf("snapshot marker %d (acked %v, tried %v)", snap, run.markerAcked, run.markerTried)
	}
	last := st.LastIndex()
	if last < run.acked || last > max(run.acked, run.failedUpTo) {
		t.Fatalf("last index %d; acked up to %d, failed save up to %d", last, run.acked, run.failedUpTo)
	}
	if len(st.Entries) > 0 {
		if want := mkEnts(snap+1, last, 1); !entriesEqual(st.Entries, want) {
			t.Fatalf("entries %s, want %d..%d", describe(st.Entries), snap+1, last)
		}
	}
	switch st.HardState {
	case run.hs:
	case run.failedHS:
		if last != run.failedUpTo {
			t.Fatalf("hard state of the failed save without all its entries (last %d)", last)
		}
	default:
		t.Fatalf("hard state %+v, want %+v or %+v", st.HardState, run.hs, run.failedHS)
	}
}

func entriesEqual(a, b []raftpb.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Index != b[i].Index || a[i].Term != b[i].Term || string(a[i].Data) != string(b[i].Data) {
			return false
		}
	}
	return true
}

// TestFailEveryOpDuringSave fails operation i of a save workload, for every
// i until a run needs no failure, with each kind of injected error; then
// reopens on the underlying FS, with and without a crash.
func TestFailEveryOpDuringSave(t *testing.T) {
	opts := Options{SegmentSize: failOpSegs}
	for _, injErr := range injectedErrors {
		t.Run(injErr.Error(), func(t *testing.T) {
			for i := 0; ; i++ {
				mem := vfs.NewMem()
				inj := &armedCounter{c: errorfs.OnIndex(i, injErr)}
				w, _ := mustOpen(t, errorfs.Wrap(mem, inj), opts)
				inj.armed.Store(true)
				run := workload(t, w)
				w.Close()
				op, fired := inj.c.Fired()
				for _, fs := range []*vfs.MemFS{mem.CrashClone(), mem} {
					w2, st, err := Open(fs, testDir, opts)
					if err != nil {
						t.Fatalf("op %d (%v) failed; reopen: %v", i, op, err)
					}
					checkRecovered(t, st, run)
					w2.Close()
				}
				if !fired {
					if run.acked != batches*batchSize {
						t.Fatalf("no failure injected but only %d entries acked", run.acked)
					}
					t.Logf("%d operations", i)
					return
				}
			}
		})
	}
}

// openFixture is a log of several segments whose last one ends in a torn
// record, with a leftover temporary segment: everything Open must handle.
func openFixture(t *testing.T, opts Options) (*vfs.MemFS, State) {
	mem := vfs.NewMem()
	w, _ := mustOpen(t, mem, opts)
	run := workload(t, w)
	w.Close()
	name, data := lastSegment(t, mem)
	r := scan(data)
	torn := appendProtoRecord(nil, typeEntry, &mkEnts(run.acked+1, run.acked+1, 1)[0])
	copy(data[r.end:], torn[:len(torn)-3])
	replaceFile(t, mem, name, data)
	replaceFile(t, mem, filepath.Join(testDir, segment{seq: 99, first: 1}.name()+".tmp"), []byte("junk"))
	w, st := mustOpen(t, mem.CrashClone(), opts) // what a clean recovery gives
	w.Close()
	if st.LastIndex() != batches*batchSize || st.Snapshot.Index != markerIdx {
		t.Fatalf("fixture: last %d snap %d", st.LastIndex(), st.Snapshot.Index)
	}
	return mem, *st
}

// TestFailEveryOpDuringOpen fails operation i of Open (and of one Save
// after it), for every i: Open either succeeds with the full state or fails
// with the injected error, and a later Open on the underlying FS recovers
// everything, with and without a crash in between.
func TestFailEveryOpDuringOpen(t *testing.T) {
	opts := Options{SegmentSize: failOpSegs}
	base, want := openFixture(t, opts)
	failEveryOpDuringOpen(t, base, want, opts)
}

// failEveryOpDuringOpen fails operation i of an Open of base (and of one
// Save of two entries after it), for every i: Open either succeeds with
// want or fails with the injected error, and a later Open on the
// underlying FS recovers want and what the Save acknowledged, with and
// without a crash in between.
func failEveryOpDuringOpen(t *testing.T, base *vfs.MemFS, want State, opts Options) {
	t.Helper()
	next := mkEnts(want.LastIndex()+1, want.LastIndex()+2, 1)
	for _, injErr := range injectedErrors {
		t.Run(injErr.Error(), func(t *testing.T) {
			for i := 0; ; i++ {
				mem := base.CrashClone()
				c := errorfs.OnIndex(i, injErr)
				w, st, err := Open(errorfs.Wrap(mem, c), testDir, opts)
				saved := false
				if err == nil {
					checkState(t, st, want)
					if err := w.Save(raftpb.HardState{}, next); err == nil {
						saved = true
					} else {
						checkBrokenErr(t, err)
					}
					w.Close()
				} else if !errors.Is(err, syscall.EIO) && !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("op %d: Open = %v, want the injected error", i, err)
				}
				op, fired := c.Fired()
				for _, fs := range []*vfs.MemFS{mem.CrashClone(), mem} {
					w2, st2, err := Open(fs, testDir, opts)
					if err != nil {
						t.Fatalf("op %d (%v) failed; reopen: %v", i, op, err)
					}
					exp := want
					if saved {
						exp.Entries = append(append([]raftpb.Entry(nil), want.Entries...), next...)
					}
					if !saved && st2.LastIndex() > want.LastIndex() {
						exp.Entries = append(append([]raftpb.Entry(nil), want.Entries...), next[:st2.LastIndex()-want.LastIndex()]...)
					}
					checkState(t, st2, exp)
					w2.Close()
				}
				if !fired {
					t.Logf("%d operations", i)
					return
				}
			}
		})
	}
}

func TestInjectedErrorsNamed(t *testing.T) {
	for _, e := range injectedErrors {
		if fmt.Sprint(e) == "" {
			t.Fatal("unnamed error")
		}
	}
}

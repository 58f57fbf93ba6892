package replica

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
)

// startWithClock builds a replica on fs whose clock reads now, returns
// the first sequence number it would give, and closes it.
func startWithClock(t *testing.T, fs vfs.FS, now int64) (uint64, error) {
	t.Helper()
	state := txn.NewState(tree.New())
	r, err := New(Config{
		State: state, Prep: txn.NewPrepper(state, txn.PrepConfig{}),
		OnApply: func(Event) {}, Now: func() int64 { return now },
		FS: fs, Dir: "/data/log", SnapDir: "/data/snap", SegmentSize: 64 << 10,
	})
	if err != nil {
		return 0, err
	}
	defer r.closeLog()
	return r.nextSeq(), nil
}

// A run's sequence numbers start above every earlier run's, even when the
// clock was stepped back across the restart (simulator seed 67245 of
// 6bc5c86: a forward of the previous run, applied after the restart,
// completed a request of the new run with the wrong result).
func TestSequenceNumbersSurviveAClockSteppedBack(t *testing.T) {
	fs := vfs.NewMem()
	first, err := startWithClock(t, fs, 5_000)
	if err != nil {
		t.Fatal(err)
	}
	// Across a crash too: the floor is durable before New returns.
	fs = fs.CrashClone()
	second, err := startWithClock(t, fs, 1_000) // 4 s back
	if err != nil {
		t.Fatal(err)
	}
	if second <= first+seqReserve/2 {
		t.Fatalf("after the clock went back, the first sequence number is %d; the previous run's was %d", second, first)
	}
	// A clock that moved on still leads when it is ahead of the floor.
	later := int64(second/1_000_000) + 60_000
	third, err := startWithClock(t, fs, later)
	if err != nil {
		t.Fatal(err)
	}
	if third < uint64(later)*1_000_000 {
		t.Fatalf("with the clock at %d ms, the first sequence number is %d", later, third)
	}
}

// A corrupt floor file stops the start with an error that names it; it is
// never read as 0.
func TestCorruptSequenceFloorIsRefused(t *testing.T) {
	fs := vfs.NewMem()
	if _, err := startWithClock(t, fs, 5_000); err != nil {
		t.Fatal(err)
	}
	if err := fs.Corrupt(filepath.Join("/data/log", seqFloorFile), 3, 1); err != nil {
		t.Fatal(err)
	}
	_, err := startWithClock(t, fs, 5_000)
	if !errors.Is(err, errSeqFloor) {
		t.Fatalf("start over a corrupt floor: %v; want errSeqFloor", err)
	}
}

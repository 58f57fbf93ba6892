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

// FuzzSeqFloor: any bytes in the floor file give the floor they encode or
// errSeqFloor, never a panic, and what is accepted is what was written.
func FuzzSeqFloor(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, seqFloorLen))
	good := vfs.NewMem()
	if err := good.MkdirAll("/log", 0o755); err != nil {
		f.Fatal(err)
	}
	if err := writeSeqFloor(good, "/log", 1<<41); err != nil {
		f.Fatal(err)
	}
	r, err := good.Open("/log/" + seqFloorFile)
	if err != nil {
		f.Fatal(err)
	}
	b := make([]byte, seqFloorLen)
	if _, err := r.Read(b); err != nil {
		f.Fatal(err)
	}
	r.Close()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := vfs.NewMem()
		if err := fs.MkdirAll("/log", 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := fs.Create("/log/" + seqFloorFile)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		w.Close()
		floor, err := readSeqFloor(fs, "/log")
		if err != nil {
			if !errors.Is(err, errSeqFloor) {
				t.Fatalf("error %v is not errSeqFloor", err)
			}
			return
		}
		back := vfs.NewMem()
		if err := back.MkdirAll("/log", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeSeqFloor(back, "/log", floor); err != nil {
			t.Fatal(err)
		}
		if again, err := readSeqFloor(back, "/log"); err != nil || again != floor {
			t.Fatalf("floor %d read back as %d, %v", floor, again, err)
		}
	})
}

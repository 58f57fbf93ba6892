package wal

import (
	"bytes"
	"errors"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// TestBitRotInLastSegment flips one bit at every offset of a fully written,
// fsynced last segment. Bit rot is not a torn write: Open must either
// refuse with a *CorruptionError naming the segment and the bad record's
// offset, leaving the file as it was, or (rot in the unused zeros after the
// records) recover every entry. It must never start with fewer entries:
// those were acknowledged.
func TestBitRotInLastSegment(t *testing.T) {
	base := vfsMemWithLog(t)
	name, data := lastSegment(t, base)
	full := scan(data)
	if full.bad != nil {
		t.Fatalf("setup: %v", full.bad)
	}
	want := replayPrefix(t, full, len(full.records))
	var refused, clean int
	for off := 0; off < int(full.end)+2*headerSize; off++ {
		for _, mask := range []byte{0x01, 0x80} {
			fs := base.CrashClone()
			if err := fs.Corrupt(name, off, mask); err != nil {
				t.Fatal(err)
			}
			_, before := lastSegment(t, fs)
			w, st, err := Open(fs, testDir, testOpts)
			if err != nil {
				var ce *CorruptionError
				if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.File != name {
					t.Fatalf("rot at %d (mask %#x): Open: %v; want a *CorruptionError in %s", off, mask, err, name)
				}
				if ce.Offset > int64(off) {
					t.Fatalf("rot at %d: corruption reported at %d, past the damage", off, ce.Offset)
				}
				if _, after := lastSegment(t, fs); !bytes.Equal(before, after) {
					t.Fatalf("rot at %d: a refused Open changed the segment", off)
				}
				refused++
				continue
			}
			if off < int(full.end) {
				t.Fatalf("rot at %d (mask %#x) inside the records: Open succeeded", off, mask)
			}
			checkState(t, st, want)
			w.Close()
			clean++
		}
	}
	if refused == 0 || clean == 0 {
		t.Fatalf("%d refusals, %d clean opens: the loop tested nothing", refused, clean)
	}
}

// vfsMemWithLog writes a log whose last segment holds its header records,
// two Saves of entries and a HardState, all fsynced.
func vfsMemWithLog(t *testing.T) *vfs.MemFS {
	t.Helper()
	fs := vfs.NewMem()
	w, _ := mustOpen(t, fs, testOpts)
	mustSave(t, w, raftpb.HardState{Term: 1, Vote: 1, Commit: 1}, mkEnts(1, 3, 1))
	mustSave(t, w, raftpb.HardState{Term: 1, Vote: 1, Commit: 3}, mkEnts(4, 6, 1))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return fs
}

// FuzzBitRot: one flipped bit inside the records of a segment is never
// read as a clean end or a torn tail that drops records.
func FuzzBitRot(f *testing.F) {
	f.Add([]byte("abc"), []byte("second"), uint16(3), byte(1))
	f.Add([]byte{}, []byte{0, 0, 0}, uint16(12), byte(0x80))
	f.Add([]byte("x"), []byte("y\x00"), uint16(20), byte(0x10))
	f.Fuzz(func(t *testing.T, p1, p2 []byte, pos uint16, mask byte) {
		if mask == 0 {
			return
		}
		data := appendRecord(appendRecord(nil, typeEntry, p1), typeHardState, p2)
		if len(p2) == 0 || p2[len(p2)-1] == 0 {
			return // damage to a record ending in zeros may read as torn (tornRecord)
		}
		written := len(data)
		data = append(data, make([]byte, int(pos)%32)...)
		off := int(pos) % written
		data[off] ^= mask
		if data[written-1] == 0 {
			// The record now ends in zeros, as a write that lost its
			// last bytes would: tornRecord cannot tell them apart.
			return
		}
		r := scan(data)
		if r.bad == nil {
			t.Fatalf("rot at %d: scan found no bad record", off)
		}
		if !r.corrupt {
			t.Fatalf("rot at %d of %d written bytes: taken as a torn tail at %d", off, written, r.end)
		}
	})
}

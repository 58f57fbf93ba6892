package wal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// TestStorageMatchesMemoryStorage runs random writes, truncations,
// snapshots, compactions and evictions on a Storage and on raft's
// MemoryStorage, and checks that raft reads the same from both: entries
// no longer held are read back from the WAL, across segments. Then the
// Storage is recovered from a crash, evicted whole, and read again.
func TestStorageMatchesMemoryStorage(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			fs := vfs.NewMem()
			w, s := mustStorage(t, fs, nil)
			ms := raft.NewMemoryStorage()
			term := uint64(1)
			evicted := 0
			for step := range 300 {
				last, _ := ms.LastIndex()
				first, _ := ms.FirstIndex()
				switch op := rng.IntN(10); {
				case op < 6: // append, sometimes replacing a suffix
					from := last + 1
					// Never at or below a snapshot: raft truncates only
					// what was not committed.
					if low := max(first, snapIndex(ms)+1); last >= low && rng.IntN(4) == 0 {
						from = last + 1 - uint64(rng.IntN(int(min(last+1-low, 5))+1))
						term++
					}
					ents := mkEnts(from, from+uint64(rng.IntN(8)), term)
					must(t, s.Save(raftpb.HardState{Term: term, Commit: from - 1}, ents))
					must(t, ms.Append(ents))
				case op < 7 && last > snapIndex(ms): // snapshot and compact behind it
					sn, _ := ms.Snapshot()
					i := sn.Metadata.Index + 1 + uint64(rng.IntN(int(last-sn.Metadata.Index)))
					_, err := s.CreateSnapshot(i, raftpb.ConfState{}, nil)
					must(t, err)
					_, err = ms.CreateSnapshot(i, &raftpb.ConfState{}, nil)
					must(t, err)
					if c := first - 1 + uint64(rng.IntN(int(i-first+2))); c >= first {
						must(t, s.Compact(c))
						must(t, ms.Compact(c))
					}
				default: // let entries go from memory
					evicted += s.Evict(first - 1 + uint64(rng.IntN(int(last-first+2))))
				}
				if step%10 == 0 {
					sameAsMemory(t, rng, s, ms)
				}
			}
			sameAsMemory(t, rng, s, ms)
			if evicted == 0 {
				t.Fatal("no entry was evicted: the test read nothing back")
			}
			w.Close()

			// The locations recovered are those the entries were written at.
			w, s = mustStorage(t, fs.CrashClone(), nil)
			defer w.Close()
			last, _ := s.LastIndex()
			s.Evict(last)
			if n := s.Held(); n != 0 {
				t.Fatalf("%d entries held after evicting all", n)
			}
			if sn := snapIndex(ms); first(ms) <= sn {
				// Recovery drops what the snapshot covers; so must the model.
				must(t, ms.Compact(sn))
			}
			sameAsMemory(t, rng, s, ms)
			must(t, s.Err())
		})
	}
}

func snapIndex(ms *raft.MemoryStorage) uint64 {
	sn, _ := ms.Snapshot()
	return sn.Metadata.Index
}

func first(ms *raft.MemoryStorage) uint64 {
	i, _ := ms.FirstIndex()
	return i
}

// sameAsMemory checks that s answers raft's reads as ms does.
func sameAsMemory(t *testing.T, rng *rand.Rand, s *Storage, ms *raft.MemoryStorage) {
	t.Helper()
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	mfirst, _ := ms.FirstIndex()
	mlast, _ := ms.LastIndex()
	if first != mfirst || last != mlast {
		t.Fatalf("log [%d, %d], MemoryStorage [%d, %d]", first, last, mfirst, mlast)
	}
	for i := first - 1; i <= last; i++ {
		got, err := s.Term(i)
		want, werr := ms.Term(i)
		if got != want || !errors.Is(err, werr) {
			t.Fatalf("Term(%d) = %d, %v; MemoryStorage %d, %v", i, got, err, want, werr)
		}
	}
	if _, err := s.Term(first - 2); first > 1 && !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("Term(%d) before the first: %v", first-2, err)
	}
	for range 20 {
		if last < first {
			break
		}
		lo := first + uint64(rng.IntN(int(last-first+1)))
		hi := lo + 1 + uint64(rng.IntN(int(last-lo+1)))
		maxSize := uint64(rng.IntN(200))
		got, err := s.Entries(lo, hi, maxSize)
		must(t, err)
		want, err := ms.Entries(lo, hi, maxSize)
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Entries(%d, %d, %d) = %s; MemoryStorage %s", lo, hi, maxSize, describe(got), describe(want))
		}
	}
	if _, err := s.Entries(first-1, last+1, 1<<20); first > 1 && !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("Entries from before the first: %v", err)
	}
	must(t, s.Err())
}

// TestStorageHoldsOnlyWhatIsNotEvicted: evicted entries' data is no longer
// referenced by the Storage, the newest are still held, and an entry
// whose place in the log is unknown (recovered by an older version, say)
// stays held.
func TestStorageHoldsOnlyWhatIsNotEvicted(t *testing.T) {
	w, s := mustStorage(t, vfs.NewMem(), nil)
	defer w.Close()
	must(t, s.Save(raftpb.HardState{Term: 1}, mkEnts(1, 100, 1)))
	if n := s.Evict(90); n != 90 {
		t.Fatalf("evicted %d, want 90", n)
	}
	if n := s.Held(); n != 10 {
		t.Fatalf("%d held, want 10", n)
	}

	st := &State{Entries: mkEnts(1, 10, 1)} // no locations
	s2, err := NewStorage(w, st, nil)
	must(t, err)
	if n := s2.Evict(10); n != 0 {
		t.Fatalf("evicted %d entries of unknown place", n)
	}
}

// TestStorageDamagedRecordIsAnError: an entry read back from a damaged
// record is not returned. raft is told it is compacted (it panics on any
// other error), and Err says what happened, for the owner to stop.
func TestStorageDamagedRecordIsAnError(t *testing.T) {
	fs := vfs.NewMem()
	w, s := mustStorage(t, fs, nil)
	defer w.Close()
	must(t, s.Save(raftpb.HardState{Term: 1}, mkEnts(1, 20, 1)))
	s.Evict(20)
	files, _ := fs.List(testDir)
	seg := filepath.Join(testDir, files[len(files)-1])
	s.mu.Lock()
	off := int(s.log.slots[4].off) // entry 5
	s.mu.Unlock()
	must(t, fs.Corrupt(seg, off+headerSize+3, 0x10))
	if _, err := s.Entries(1, 5, 1<<20); err != nil {
		t.Fatalf("entries before the damage: %v", err)
	}
	must(t, s.Err())
	if _, err := s.Entries(3, 8, 1<<20); !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("Entries over the damage: %v, want ErrCompacted", err)
	}
	if err := s.Err(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Err() = %v, want ErrCorrupt", err)
	}
}

// TestStorageReleaseKeepsWhatRaftReads: a release for an old snapshot
// keeps the segments that hold entries raft may still read back.
func TestStorageReleaseKeepsWhatRaftReads(t *testing.T) {
	fs := vfs.NewMem()
	w, s := mustStorage(t, fs, nil)
	defer w.Close()
	for i := uint64(0); i < 40; i++ {
		must(t, s.Save(raftpb.HardState{Term: 1}, mkEnts(i*10+1, i*10+10, 1)))
	}
	_, err := s.CreateSnapshot(300, raftpb.ConfState{}, nil)
	must(t, err)
	must(t, s.Compact(100)) // entries 101.. kept, as for a lagging follower
	s.Evict(400)
	before, _ := fs.List(testDir)
	must(t, s.Release(300))
	after, _ := fs.List(testDir)
	if len(after) >= len(before) {
		t.Fatalf("segments %v, then %v: nothing released", before, after)
	}
	ents, err := s.Entries(101, 401, 1<<30)
	must(t, err)
	if len(ents) != 300 || ents[0].Index != 101 {
		t.Fatalf("read back %d entries from %d", len(ents), ents[0].Index)
	}
}

// FuzzFetch: entries read back from a segment with damaged bytes are
// either exactly what was written or an error (ErrCompacted to raft, and
// a corruption error for Err); never a panic, never other entries.
func FuzzFetch(f *testing.F) {
	f.Add(uint16(20), byte(0x01), uint8(10))
	f.Add(uint16(300), byte(0x80), uint8(1))
	f.Add(uint16(17), byte(0xff), uint8(40))
	f.Fuzz(func(t *testing.T, pos uint16, mask byte, n uint8) {
		fs := vfs.NewMem()
		w, s := mustStorage(t, fs, nil)
		defer w.Close()
		want := mkEnts(1, 40, 1)
		must(t, s.Save(raftpb.HardState{Term: 1}, want))
		s.Evict(40)
		files, _ := fs.List(testDir)
		seg := filepath.Join(testDir, files[len(files)-1])
		s.mu.Lock()
		end := int64(s.log.slots[39].off) + headerSize + int64(want[39].Size()) + 1
		s.mu.Unlock()
		if mask != 0 {
			must(t, fs.Corrupt(seg, magicSize+int(int64(pos)%(end-magicSize)), mask))
		}
		lo := 1 + uint64(n)%40
		got, err := s.Entries(lo, 41, 1<<20)
		if err != nil {
			if !errors.Is(err, raft.ErrCompacted) || !errors.Is(s.Err(), ErrCorrupt) {
				t.Fatalf("Entries: %v, Err: %v", err, s.Err())
			}
			return
		}
		if !reflect.DeepEqual(got, want[lo-1:]) {
			t.Fatalf("read back %s, wrote %s", describe(got), describe(want[lo-1:]))
		}
	})
}

package vfs

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// Sync copies only what changed since the last one; whatever the mix of
// writes, seeks, truncations and syncs, a crash must keep exactly the
// data as of the last Sync (the model: a full copy at each Sync).
func TestMemSyncKeepsExactlySyncedData(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 1))
		m := NewMem()
		if err := m.MkdirAll("/d", 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := m.Create("/d/f")
		if err != nil {
			t.Fatal(err)
		}
		if err := m.SyncDir("/d"); err != nil {
			t.Fatal(err)
		}
		var cur, synced []byte
		pos := 0
		for step := range 40 {
			switch rng.IntN(4) {
			case 0: // write at pos, maybe past the end (a zero-filled gap)
				p := make([]byte, rng.IntN(64)+1)
				for i := range p {
					p[i] = byte(rng.IntN(255) + 1)
				}
				if _, err := f.Write(p); err != nil {
					t.Fatal(err)
				}
				if end := pos + len(p); end > len(cur) {
					cur = append(cur, make([]byte, end-len(cur))...)
				}
				copy(cur[pos:], p)
				pos += len(p)
			case 1:
				pos = rng.IntN(len(cur) + 32)
				if _, err := f.(io.Seeker).Seek(int64(pos), io.SeekStart); err != nil {
					t.Fatal(err)
				}
			case 2:
				size := rng.IntN(len(cur) + 64)
				if err := f.Truncate(int64(size)); err != nil {
					t.Fatal(err)
				}
				if size <= len(cur) {
					cur = cur[:size:size]
				} else {
					cur = append(cur, make([]byte, size-len(cur))...)
				}
			case 3:
				if err := f.Sync(); err != nil {
					t.Fatal(err)
				}
				synced = bytes.Clone(cur)
			}
			got := readAll(t, m.CrashClone(), "/d/f")
			if got != string(synced) {
				t.Fatalf("seed %d step %d: after a crash the file holds %q, want %q", seed, step, got, synced)
			}
		}
	}
}

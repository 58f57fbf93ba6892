package tree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// churn sets random data, of random sizes and sometimes nil, on random
// nodes of paths, and records it in want.
func churn(t *testing.T, tr *Tree, r *rand.Rand, paths []string, want map[string][]byte, steps int, zxid *int64) {
	t.Helper()
	for range steps {
		p := paths[r.IntN(len(paths))]
		var data []byte
		if r.IntN(8) != 0 {
			data = make([]byte, r.IntN(60))
			for i := range data {
				data[i] = byte(r.Uint32())
			}
		}
		*zxid++
		if _, err := tr.SetData(p, data, 1, *zxid, *zxid); err != nil {
			t.Fatal(err)
		}
		want[p] = data
	}
}

func checkData(t *testing.T, tr *Tree, want map[string][]byte) {
	t.Helper()
	for p, data := range want {
		got, _, err := tr.Get(p)
		if err != nil || !bytes.Equal(got, data) || (got == nil) != (data == nil) {
			t.Fatalf("Get(%s) = %q, %v; set %q", p, got, err, data)
		}
	}
	checkInvariants(t, tr)
}

// smallChunks makes tr's store use chunks of size bytes from now on, and
// compact each chunk as soon as it is queued (no slack).
func smallChunks(tr *Tree, size int) {
	tr.bufs.chunkBytes = size
	tr.bufs.slack = 0
	tr.bufs.retire()
}

// newChurnTree returns a tree with small chunks, the given slack and n
// nodes with data.
func newChurnTree(t *testing.T, n, slack int) (*Tree, []string, map[string][]byte) {
	t.Helper()
	tr := New()
	smallChunks(tr, 512)
	tr.bufs.slack = slack
	want := map[string][]byte{}
	var paths []string
	for i := range n {
		p := fmt.Sprintf("/node-%d", i)
		mustCreate(t, tr, p, []byte(p), 0, int64(i+1))
		paths = append(paths, p)
		want[p] = []byte(p)
	}
	return tr, paths, want
}

// A store under any pattern of changes holds about 1.5 times its live
// bytes plus its slack: chunks under two thirds live are compacted, empty
// ones dropped; the data read back is what was set; and data read before
// a change stays as it was, though its record was freed and its chunk
// compacted.
func TestBufStoreCompacts(t *testing.T) {
	for _, slack := range []int{0, 2048} {
		t.Run(fmt.Sprintf("slack=%d", slack), func(t *testing.T) { testBufStoreCompacts(t, slack) })
	}
}

func testBufStoreCompacts(t *testing.T, slack int) {
	r := rand.New(rand.NewPCG(1, 2))
	tr, paths, want := newChurnTree(t, 300, slack)
	zxid := int64(1000)
	old, _, _ := tr.Get(paths[0])
	oldCopy := bytes.Clone(old)
	for round := range 20 {
		churn(t, tr, r, paths, want, 500, &zxid)
		checkData(t, tr, want)
		s := &tr.bufs
		if held, live := s.size(); 2*held > 3*live+2*(s.chunkBytes+slack) {
			t.Fatalf("round %d: store holds %d bytes for %d live", round, held, live)
		}
	}
	if !bytes.Equal(old, oldCopy) {
		t.Fatalf("data read before the changes became %q, was %q", old, oldCopy)
	}
	// Deleting every node leaves the chunk being filled and at most the
	// slack's dead bytes.
	for _, p := range paths {
		zxid++
		if err := tr.DeleteNode(p, zxid); err != nil {
			t.Fatal(err)
		}
	}
	checkInvariants(t, tr)
	if held, live := tr.bufs.size(); held > tr.bufs.chunkBytes+slack+live {
		t.Fatalf("after deleting every node the store holds %d bytes, %d live", held, live)
	}
}

// An open Frozen view reads records where they were at the freeze, so
// compaction waits for it: the view walks the data of its freeze however
// much changes meanwhile, and once it is closed the next change compacts.
func TestBufStoreWaitsForViews(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tr, paths, want := newChurnTree(t, 300, 0)
	zxid := int64(1000)
	churn(t, tr, r, paths, want, 500, &zxid)
	frozenWant := map[string][]byte{}
	for p, d := range want {
		frozenWant[p] = d
	}
	f := tr.Freeze()
	churn(t, tr, r, paths, want, 3000, &zxid)
	checkData(t, tr, want)
	s := &tr.bufs
	if len(s.pending) == 0 {
		t.Fatal("no chunk waits for compaction after 3,000 changes under an open view")
	}
	seen := 0
	err := f.Walk(func(path []byte, n Node) error {
		if d, ok := frozenWant[string(path)]; ok {
			seen++
			if !bytes.Equal(n.Data, d) || (n.Data == nil) != (d == nil) {
				return fmt.Errorf("view of %s = %q; at the freeze %q", path, n.Data, d)
			}
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(frozenWant) {
		t.Fatalf("view walked %d of %d nodes", seen, len(frozenWant))
	}
	f.Close()
	churn(t, tr, r, paths, want, 1, &zxid)
	checkData(t, tr, want)
	if held, live := s.size(); len(s.pending) != 0 || 2*held > 3*live+2*s.chunkBytes {
		t.Fatalf("after the view closed: %d chunks wait, store holds %d bytes for %d live", len(s.pending), held, live)
	}
}

// Records of znodes that change often die young: within the slack, their
// chunks empty and are dropped without a record copied, and the store
// stays within its bound. Without the slack, the same changes copy
// records of znodes that did not change.
func TestBufStoreSlackSparesHotRecords(t *testing.T) {
	for _, tc := range []struct {
		slack     int
		wantMoves bool
	}{{0, true}, {4096, false}} {
		tr, paths, want := newChurnTree(t, 200, tc.slack)
		hot := paths[:20]
		zxid := int64(1000)
		moved := 0
		for i := range 2000 {
			p := hot[i%len(hot)] // each dies one round after it was written
			before := bufsOf(tr, paths)
			data := fmt.Appendf(nil, "%s-%d", p, i)
			zxid++
			if _, err := tr.SetData(p, data, -1, zxid, zxid); err != nil {
				t.Fatal(err)
			}
			want[p] = data
			for j, ref := range bufsOf(tr, paths) {
				if paths[j] != p && ref != before[j] {
					moved++
				}
			}
			s := &tr.bufs
			if held, live := s.size(); 2*held > 3*live+2*(s.chunkBytes+tc.slack) {
				t.Fatalf("slack %d, step %d: store holds %d bytes for %d live", tc.slack, i, held, live)
			}
		}
		checkData(t, tr, want)
		if (moved > 0) != tc.wantMoves {
			t.Errorf("slack %d: %d records of unchanged znodes moved; want moves: %v", tc.slack, moved, tc.wantMoves)
		}
	}
}

// bufsOf returns the record each of paths' nodes has.
func bufsOf(tr *Tree, paths []string) []bufRef {
	refs := make([]bufRef, len(paths))
	for i, p := range paths {
		refs[i] = tr.nodes.at(tr.lookup(p)).buf
	}
	return refs
}
